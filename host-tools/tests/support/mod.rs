//! An in-process fake switch: a thread with a UDP socket on 127.0.0.1 that
//! serves weft-proto the way the firmware does (`receive_request`, a reply
//! cache, typed refusals) and answers with whatever a test's handler says.
//! It records every datagram and every executed request, so a test can
//! check what the client sent and what the switch ran.

#![allow(dead_code)]

use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use weft_proto::heapless::String as HString;
use weft_proto::*;
use weftctl::ClientConfig;

/// The fake switch's identity.
pub const SWITCH: SwitchId = SwitchId(0x5745_4654_0001);

/// The fake switch's key, as an operator would type it.
pub const KEY_HEX: &str = "8f14e45fceea167a5a36dedd4bea2543c4ca4238a0b923820dcc509a6f75849b";

/// Another key, which the fake switch does not hold.
pub const OTHER_KEY_HEX: &str = "1111111111111111111111111111111111111111111111111111111111111111";

/// The longest a fake runs, so that a test that forgets it cannot hang.
const LIFETIME: Duration = Duration::from_secs(60);

pub fn key() -> Key {
    Key::parse_hex(KEY_HEX).expect("valid test key")
}

/// A client configuration for `addr` with short, bounded timeouts.
pub fn config(addr: SocketAddr, key: Key) -> ClientConfig {
    let mut config = ClientConfig::new(addr, key);
    config.per_try = Duration::from_millis(200);
    config.retries = 3;
    config.operation_deadline = Duration::from_secs(5);
    config.poll_interval = Duration::from_millis(5);
    config.max_poll_interval = Duration::from_millis(20);
    config
}

/// A counter mark a minute ahead of this machine's clock, as a switch that
/// restarted just after accepting a request resumes from (the firmware
/// keeps its mark a minute above the last accepted counter).
pub fn restart_mark() -> u64 {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("after 1970")
        .as_micros();
    u64::try_from(now).expect("fits") + 60_000_000
}

/// The identity the fake reports.
pub fn identity() -> Identity {
    Identity {
        switch: SWITCH,
        firmware: FirmwareVersion {
            major: 0,
            minor: 3,
            patch: 1,
            build: HString::try_from("abc1234").expect("fits"),
        },
        protocol: PROTOCOL_VERSION,
        oldest_protocol: OLDEST_PROTOCOL_VERSION,
        board: HString::try_from("fake-board").expect("fits"),
        ports: 8,
        capabilities: Capabilities::BIND.union(Capabilities::AUTHENTICATED),
    }
}

/// What the fake recorded.
#[derive(Default)]
pub struct Log {
    /// Every request datagram received, in order.
    pub datagrams: Vec<Vec<u8>>,
    /// Every request executed (not answered from the cache), in order.
    pub executed: Vec<(Header, Request)>,
    /// How many repeats the reply cache answered.
    pub resent: usize,
}

/// How the fake misbehaves.
pub struct Options {
    /// The key it holds.
    pub key: Key,
    /// Its identity.
    pub switch: SwitchId,
    /// How many answers to executed requests it drops (they still go into
    /// the reply cache).
    pub drop_answers: usize,
    /// Whether it sends a non-weft datagram and an answer to another request
    /// before each real answer.
    pub noise: bool,
    /// The counter it starts from, as a restarted switch resumes from the
    /// mark kept in flash: only counters above it are accepted.
    pub floor: u64,
    /// How far its floor moves after each counter-too-old refusal, as if
    /// another client's newer request were accepted in between (0: never).
    pub floor_moves_after_refusal: u64,
    /// Whether answers go into its reply cache; without, a retry of a
    /// request that ran is refused as one that may have run, as after its
    /// answer left the cache.
    pub keep_answers: bool,
    /// The newest protocol version it speaks, as an older firmware would:
    /// a request at a newer one is refused with `WrongVersion` and not run.
    pub newest_version: u16,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            key: key(),
            switch: SWITCH,
            drop_answers: 0,
            noise: false,
            floor: 0,
            floor_moves_after_refusal: 0,
            keep_answers: true,
            newest_version: PROTOCOL_VERSION,
        }
    }
}

/// A running fake switch; it stops when dropped.
pub struct FakeSwitch {
    addr: SocketAddr,
    log: Arc<Mutex<Log>>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl FakeSwitch {
    /// A fake with the default options answering with `handler`.
    pub fn start(handler: impl FnMut(&Request, &[u8]) -> Response + Send + 'static) -> FakeSwitch {
        FakeSwitch::with(Options::default(), handler)
    }

    /// A fake with these options answering with `handler`, which gets each
    /// executed request and its trailing bytes.
    pub fn with(
        options: Options,
        mut handler: impl FnMut(&Request, &[u8]) -> Response + Send + 'static,
    ) -> FakeSwitch {
        let socket = UdpSocket::bind("127.0.0.1:0").expect("bind a local UDP port");
        socket
            .set_read_timeout(Some(Duration::from_millis(20)))
            .expect("set a read timeout");
        let addr = socket.local_addr().expect("local address");
        let log = Arc::new(Mutex::new(Log::default()));
        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let log = Arc::clone(&log);
            let stop = Arc::clone(&stop);
            thread::spawn(move || {
                let Options {
                    key,
                    switch,
                    mut drop_answers,
                    noise,
                    floor,
                    floor_moves_after_refusal,
                    keep_answers,
                    newest_version,
                } = options;
                let mut verifier = Verifier::resume(switch, key, floor);
                let mut cache = ReplyCache::<4>::new();
                let mut buf = [0u8; MAX_DATAGRAM + 1];
                let mut answer = [0u8; MAX_DATAGRAM];
                let end = Instant::now() + LIFETIME;
                while !stop.load(Ordering::Relaxed) && Instant::now() < end {
                    let Ok((len, peer)) = socket.recv_from(&mut buf) else {
                        continue;
                    };
                    let datagram = &buf[..len];
                    lock(&log).datagrams.push(datagram.to_vec());
                    match receive_request(datagram, &mut verifier, &cache) {
                        Ok(Incoming::Execute(received))
                            if received.header.version > newest_version =>
                        {
                            // What an older switch answers, under its own version.
                            let header = Header {
                                version: newest_version,
                                ..received.header.reply(switch)
                            };
                            let refusal = Response::Error(Error::WrongVersion {
                                ours: newest_version,
                                oldest: OLDEST_PROTOCOL_VERSION,
                            });
                            let n = encode_response(
                                &header,
                                &refusal,
                                &[],
                                verifier.key(),
                                &mut answer,
                            )
                            .expect("the refusal encodes");
                            let _ = socket.send_to(&answer[..n], peer);
                        }
                        Ok(Incoming::Execute(received)) => {
                            let response = handler(&received.request, received.trailing);
                            lock(&log)
                                .executed
                                .push((received.header, received.request.clone()));
                            let n = encode_response(
                                &received.header.reply(switch),
                                &response,
                                &[],
                                verifier.key(),
                                &mut answer,
                            )
                            .expect("the answer encodes");
                            if keep_answers {
                                cache
                                    .insert(received.fingerprint, &answer[..n])
                                    .expect("a datagram fits");
                            } else {
                                cache.forget(received.fingerprint);
                            }
                            if drop_answers > 0 {
                                drop_answers -= 1;
                                continue;
                            }
                            if noise {
                                send_noise(&socket, peer, &received.header, switch, &verifier);
                            }
                            let _ = socket.send_to(&answer[..n], peer);
                        }
                        Ok(Incoming::Resend(bytes)) => {
                            lock(&log).resent += 1;
                            let _ = socket.send_to(bytes, peer);
                        }
                        Err(refused) => {
                            if let Some((header, error)) = refused.refusal(switch) {
                                let too_old = matches!(error, Error::CounterTooOld { .. });
                                let n = encode_response(
                                    &header,
                                    &Response::Error(error),
                                    &[],
                                    verifier.key(),
                                    &mut answer,
                                )
                                .expect("the refusal encodes");
                                let _ = socket.send_to(&answer[..n], peer);
                                if too_old {
                                    verifier = Verifier::resume(
                                        switch,
                                        verifier.key().clone(),
                                        verifier.last_accepted() + floor_moves_after_refusal,
                                    );
                                }
                            }
                        }
                    }
                }
            })
        };
        FakeSwitch {
            addr,
            log,
            stop,
            thread: Some(thread),
        }
    }

    /// Its address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// What it recorded so far.
    pub fn log(&self) -> MutexGuard<'_, Log> {
        lock(&self.log)
    }
}

impl Drop for FakeSwitch {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn lock(log: &Mutex<Log>) -> MutexGuard<'_, Log> {
    log.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// A datagram that is not weft, then a valid answer to another request.
fn send_noise(
    socket: &UdpSocket,
    peer: SocketAddr,
    header: &Header,
    switch: SwitchId,
    verifier: &Verifier,
) {
    let _ = socket.send_to(b"not a weft datagram", peer);
    let mut other = header.reply(switch);
    other.request_id = other.request_id.wrapping_sub(1);
    let mut answer = [0u8; MAX_DATAGRAM];
    let n = encode_response(&other, &Response::Pong, &[], verifier.key(), &mut answer)
        .expect("encodes");
    let _ = socket.send_to(&answer[..n], peer);
}
