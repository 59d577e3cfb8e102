//! The management server: weft-proto requests on UDP port
//! [`MANAGEMENT_UDP_PORT`], checked and answered through
//! [`weft_proto::Responder`] as every weft server does.
//!
//! Requests are answered by the fabric manager (weft-fabric's
//! `management::handle`, through [`crate::fabric::Fabric::answer`]). Without
//! a data plane to manage (no weft CSR window answered at start) the
//! firmware answers Ping and Identify itself and refuses every other
//! request with [`Error::Unsupported`]: the switch knows the request but
//! cannot carry it out.
//!
//! Until a key is provisioned on the console (`key`, or `insecure` by
//! name) there is nothing to check a request with, so requests are
//! dropped unanswered.

use weft_fabric::management::BoardInfo;
use weft_proto::heapless::String;
use weft_proto::{
    Capabilities, Error, FirmwareVersion, Identity, Key, Request, Responder, Response, SwitchId,
    Verifier, OLDEST_PROTOCOL_VERSION, PROTOCOL_VERSION,
};
pub use weft_proto::{MANAGEMENT_UDP_PORT, MAX_DATAGRAM};
use weft_regs::capacity::PORTS;

use crate::fabric::Fabric;

/// Answers kept for retried requests: one client with a request in
/// flight and a few others, at about 1.5 KiB each.
pub const REPLY_CACHE_ENTRIES: usize = 4;

/// The board name Identify reports.
pub const BOARD_NAME: &str = "weft-soc";

/// The management server's state.
pub struct Management {
    switch: SwitchId,
    responder: Option<Responder<REPLY_CACHE_ENTRIES>>,
}

impl Management {
    /// A server for switch `switch` with no key yet.
    pub const fn new(switch: SwitchId) -> Self {
        Management {
            switch,
            responder: None,
        }
    }

    /// Checks requests with `key` from now on; the replay counter carries
    /// over from the previous key.
    pub fn set_key(&mut self, key: Key) {
        match &mut self.responder {
            Some(responder) => responder.change_key(key),
            None => self.responder = Some(Responder::new(Verifier::new(self.switch, key))),
        }
    }

    /// Whether requests are checked against a key (any key, even the insecure one).
    pub fn has_key(&self) -> bool {
        self.responder.is_some()
    }

    /// The answer to `datagram` in `out`, from `fabric` if there is one:
    /// its length, 0 for none.
    pub fn answer(
        &mut self,
        datagram: &[u8],
        out: &mut [u8],
        fabric: Option<&mut Fabric>,
    ) -> usize {
        let switch = self.switch;
        let Some(responder) = &mut self.responder else {
            return 0;
        };
        let authenticated = !responder.verifier().key().is_insecure();
        responder.answer(datagram, out, |request, trailing| match fabric {
            Some(fabric) => {
                let board = board_info(fabric.ports(), authenticated);
                fabric.answer(&board, request, trailing)
            }
            None => execute(request, switch, authenticated),
        })
    }
}

/// What the firmware answers on its own, without a fabric.
fn execute(request: &Request, switch: SwitchId, authenticated: bool) -> Response {
    match request {
        Request::Ping => Response::Pong,
        Request::Identify => Response::Identity(identity(switch, authenticated)),
        _ => Response::Error(Error::Unsupported),
    }
}

/// The switch's identity: no fabric capabilities until the fabric manager runs here.
fn identity(switch: SwitchId, authenticated: bool) -> Identity {
    let capabilities = if authenticated {
        Capabilities::AUTHENTICATED
    } else {
        Capabilities::NONE
    };
    let mut board = String::new();
    // The name is a constant shorter than MAX_BOARD_NAME.
    let _ = board.push_str(BOARD_NAME);
    Identity {
        switch,
        firmware: FirmwareVersion {
            major: version_part(env!("CARGO_PKG_VERSION_MAJOR")),
            minor: version_part(env!("CARGO_PKG_VERSION_MINOR")),
            patch: version_part(env!("CARGO_PKG_VERSION_PATCH")),
            build: String::new(),
        },
        protocol: PROTOCOL_VERSION,
        oldest_protocol: OLDEST_PROTOCOL_VERSION,
        board,
        ports: PORTS as u8,
        capabilities,
    }
}

/// What the board says about itself to the fabric manager's answers.
fn board_info(ports: usize, authenticated: bool) -> BoardInfo {
    BoardInfo {
        board: BOARD_NAME,
        version: (
            version_part(env!("CARGO_PKG_VERSION_MAJOR")),
            version_part(env!("CARGO_PKG_VERSION_MINOR")),
            version_part(env!("CARGO_PKG_VERSION_PATCH")),
        ),
        build: "",
        ports: u8::try_from(ports).unwrap_or(u8::MAX),
        authenticated,
    }
}

/// One part of the package version, which Cargo guarantees is a number.
fn version_part(part: &str) -> u16 {
    part.parse().unwrap_or(0)
}
