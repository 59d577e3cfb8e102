//! The switch both targets talk to: `weft-sim serve`'s virtual board (the
//! reference fabric, enumerated, host 1 booted), built once per process on
//! libFuzzer's thread.

use std::cell::RefCell;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};

use weft_proto::Key;
use weft_sim::serve::{ServeConfig, Server};

/// The key the board checks: bytes 0, 1, …, 31.
pub fn key() -> Key {
    Key::from_bytes(core::array::from_fn(|i| i as u8))
}

thread_local! {
    static SERVER: RefCell<Server> = RefCell::new(
        Server::start(ServeConfig {
            listen: SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), 0),
            key: key(),
            counter_floor: 0,
        })
        .expect("the virtual board starts"),
    );
}

/// Runs `work` with the board (on an ephemeral localhost port it never reads).
pub fn with_server<T>(work: impl FnOnce(&mut Server) -> T) -> T {
    SERVER.with(|server| work(&mut server.borrow_mut()))
}
