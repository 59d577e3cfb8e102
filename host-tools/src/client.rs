//! One switch over one UDP socket: a request made reliable.
//!
//! The protocol's rules for a client (`weft_proto`'s crate docs, "Retries")
//! decide the three loops here:
//!
//! - **Lost datagrams.** A request is encoded once and, when no answer
//!   arrives within [`ClientConfig::per_try`], the *same bytes* are sent again
//!   (same request id, same counter), up to [`ClientConfig::retries`] more
//!   times. The switch answers a repeat from its reply cache, so the request
//!   runs once however many copies arrive. Datagrams that are not the answer
//!   (a late answer to an earlier request, anything that is not weft) are
//!   ignored while waiting.
//! - **Busy.** [`Error::Busy`] is the stored answer to that request, so
//!   resending it would only fetch the same refusal: the client waits the
//!   `retry_after_ms` it names and sends a *new* request (new id, new
//!   counter), up to [`ClientConfig::busy_attempts`] requests in all.
//! - **Counter too old.** A switch that restarted resumes its counter floor
//!   from a mark kept ahead of the last counter it accepted, and another
//!   client's clock may be ahead of ours: [`Error::CounterTooOld`] (as
//!   authenticated as any answer) says the switch did not run the request
//!   now, which counter to exceed, and whether an identical request may
//!   have run before. If the request went out once, or the switch says it
//!   did not run, the client moves its counter past the floor and sends
//!   the request again at once as a new request, once; a second such
//!   refusal in a row is reported ([`ClientError::CounterStillTooOld`])
//!   rather than chased. A request that went out more than once and may
//!   have run is reported as [`ClientError::AnswerLost`]: sending it again
//!   could run it twice.
//! - **An older switch.** A switch whose newest protocol version is below
//!   ours refuses the request with [`Error::WrongVersion`] before running
//!   it. If its version is one we still speak, the client sends the request
//!   again as a new request at that version, and stays at it for the rest
//!   of its life; every variant an older version has still encodes the
//!   same (variants are only appended). A request the older switch does
//!   not know is then refused by it as such.
//! - **Background operations.** [`Response::InProgress`] is polled with
//!   [`Request::OperationStatus`], at an interval that starts at
//!   [`ClientConfig::poll_interval`] and doubles up to
//!   [`ClientConfig::max_poll_interval`], until the operation ends or
//!   [`ClientConfig::operation_deadline`] passes.
//!
//! Counters come from [`ClientCounter::next`] fed with the wall clock, so
//! that separate `weftctl` processes sharing a key stay in order.

use std::io;
use std::net::{SocketAddr, UdpSocket};
use std::thread;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use weft_proto::{
    decode_response, encode_request, ClientCounter, DecodeError, Error, Header, Identity, Key,
    OperationId, OperationReport, OperationState, Request, Response, SwitchId, MAX_DATAGRAM,
    OLDEST_PROTOCOL_VERSION, PROTOCOL_VERSION,
};

use crate::error::ClientError;

/// How a [`Client`] reaches a switch and how patient it is.
#[derive(Clone, Debug)]
pub struct ClientConfig {
    /// The switch's management address.
    pub switch: SocketAddr,
    /// The switch's key.
    pub key: Key,
    /// The switch's identity, if known; otherwise the client learns it with
    /// an Identify to [`SwitchId::ANY`] before its first other request.
    pub target: Option<SwitchId>,
    /// How long one try waits for its answer.
    pub per_try: Duration,
    /// How many times a request is resent, byte for byte, after the first
    /// send goes unanswered.
    pub retries: u32,
    /// How many requests in all are sent while the switch answers busy.
    pub busy_attempts: u32,
    /// The longest busy wait honoured at once, whatever the switch asks.
    pub max_busy_wait: Duration,
    /// How long a background operation is polled before giving up.
    pub operation_deadline: Duration,
    /// The first wait between polls of a background operation.
    pub poll_interval: Duration,
    /// The longest wait between polls.
    pub max_poll_interval: Duration,
}

impl ClientConfig {
    /// The defaults for a switch on a local network: 500 ms per try and 3
    /// resends (2 s in all), 8 busy attempts, and a minute for a background
    /// operation.
    pub fn new(switch: SocketAddr, key: Key) -> ClientConfig {
        ClientConfig {
            switch,
            key,
            target: None,
            per_try: Duration::from_millis(500),
            retries: 3,
            busy_attempts: 8,
            max_busy_wait: Duration::from_secs(5),
            operation_deadline: Duration::from_secs(60),
            poll_interval: Duration::from_millis(20),
            max_poll_interval: Duration::from_millis(500),
        }
    }
}

/// One answered request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Exchange {
    /// The answer (never [`Response::Error`]: those become [`ClientError`]s).
    pub response: Response,
    /// The time from the last send of the request to its answer.
    pub round_trip: Duration,
    /// How many datagrams carried the request that was answered (1 unless
    /// answers were lost).
    pub sends: u32,
}

/// A management client for one switch.
#[derive(Debug)]
pub struct Client {
    config: ClientConfig,
    socket: UdpSocket,
    counter: ClientCounter,
    next_id: u32,
    target: Option<SwitchId>,
    /// The protocol version requests are sent at: ours, or an older
    /// switch's once it said so.
    version: u16,
    datagram: Vec<u8>,
    answer: Vec<u8>,
}

impl Client {
    /// A client on a fresh ephemeral UDP port, talking to
    /// `config.switch`.
    pub fn connect(config: ClientConfig) -> Result<Client, ClientError> {
        let io_error = |action, source| ClientError::Io {
            action,
            switch: config.switch,
            source,
        };
        let local: SocketAddr = if config.switch.is_ipv4() {
            (std::net::Ipv4Addr::UNSPECIFIED, 0).into()
        } else {
            (std::net::Ipv6Addr::UNSPECIFIED, 0).into()
        };
        let socket = UdpSocket::bind(local).map_err(|e| io_error("bind a UDP port", e))?;
        // Connecting makes the kernel drop datagrams from other addresses and
        // report an ICMP port unreachable as an error.
        socket
            .connect(config.switch)
            .map_err(|e| io_error("set the switch's address", e))?;
        let now = now_micros();
        Ok(Client {
            target: config.target,
            next_id: (now as u32) ^ std::process::id().rotate_left(16),
            counter: ClientCounter::new(),
            version: PROTOCOL_VERSION,
            socket,
            config,
            datagram: vec![0; MAX_DATAGRAM],
            // One more than the largest datagram, so an oversized one is
            // seen as such instead of being cut to a valid length.
            answer: vec![0; MAX_DATAGRAM + 1],
        })
    }

    /// The configuration this client runs with.
    pub fn config(&self) -> &ClientConfig {
        &self.config
    }

    /// The switch requests are addressed to, once known.
    pub fn target(&self) -> Option<SwitchId> {
        self.target
    }

    /// The local address of the client's socket.
    pub fn local_addr(&self) -> Result<SocketAddr, ClientError> {
        self.socket.local_addr().map_err(|source| ClientError::Io {
            action: "read the local address",
            switch: self.config.switch,
            source,
        })
    }

    /// Asks the switch who it is. If the switch's identity was not known,
    /// the question goes to [`SwitchId::ANY`] and the answer becomes the
    /// target of later requests.
    pub fn identify(&mut self) -> Result<Identity, ClientError> {
        match self.request(&Request::Identify)? {
            Response::Identity(identity) => {
                if self.target.is_none() {
                    self.target = Some(identity.switch);
                }
                Ok(identity)
            }
            other => Err(unexpected(&Request::Identify, &other)),
        }
    }

    /// Pings the switch and returns the round-trip time of the answered send.
    pub fn ping(&mut self) -> Result<Duration, ClientError> {
        let exchange = self.exchange(&Request::Ping, &[])?;
        match exchange.response {
            Response::Pong => Ok(exchange.round_trip),
            other => Err(unexpected(&Request::Ping, &other)),
        }
    }

    /// Sends a request and returns its answer.
    pub fn request(&mut self, request: &Request) -> Result<Response, ClientError> {
        Ok(self.exchange(request, &[])?.response)
    }

    /// Sends a request and, if it started a background operation, polls the
    /// operation until it ends. The answer is the request's own response, or
    /// [`Response::Operation`] with the operation's final report.
    pub fn request_to_completion(&mut self, request: &Request) -> Result<Response, ClientError> {
        self.request_to_completion_with(request, &mut |_, _| {})
    }

    /// Like [`Client::request_to_completion`], reporting each poll's progress
    /// (operation and percent) to `progress`.
    pub fn request_to_completion_with(
        &mut self,
        request: &Request,
        progress: &mut dyn FnMut(OperationId, u8),
    ) -> Result<Response, ClientError> {
        match self.request(request)? {
            Response::InProgress { op } => self.wait_for(op, progress).map(Response::Operation),
            other => Ok(other),
        }
    }

    /// Polls a background operation until it succeeds (its final report),
    /// fails ([`ClientError::OperationFailed`]) or outlives the deadline
    /// ([`ClientError::OperationTimedOut`]).
    pub fn wait_for(
        &mut self,
        op: OperationId,
        progress: &mut dyn FnMut(OperationId, u8),
    ) -> Result<OperationReport, ClientError> {
        let start = Instant::now();
        let mut interval = self.config.poll_interval;
        loop {
            let request = Request::OperationStatus { op };
            let report = match self.request(&request)? {
                Response::Operation(report) if report.op == op => report,
                other => return Err(unexpected(&request, &other)),
            };
            let percent = match report.state {
                OperationState::Succeeded => return Ok(report),
                OperationState::Failed { reason } => {
                    return Err(ClientError::OperationFailed { op, reason })
                }
                OperationState::Running { percent } => percent,
            };
            progress(op, percent);
            let waited = start.elapsed();
            if waited + interval > self.config.operation_deadline {
                return Err(ClientError::OperationTimedOut {
                    op,
                    waited,
                    percent,
                });
            }
            thread::sleep(interval);
            interval = (interval * 2).min(self.config.max_poll_interval);
        }
    }

    /// Sends a request with `trailing` bulk bytes (a firmware chunk) and
    /// returns its answer with the round trip; the module docs describe the
    /// retries. A [`Response::Error`] comes back as a [`ClientError`].
    pub fn exchange(
        &mut self,
        request: &Request,
        trailing: &[u8],
    ) -> Result<Exchange, ClientError> {
        let target = match self.target {
            Some(target) => target,
            None if request.allows_any_switch() => SwitchId::ANY,
            None => {
                self.identify()?;
                self.target.unwrap_or(SwitchId::ANY)
            }
        };
        let attempts = self.config.busy_attempts.max(1);
        let mut busy_answers = 0;
        let mut counter_raised = false;
        loop {
            let header = Header {
                version: self.version,
                ..Header::request(self.new_request_id(), target, self.new_counter())
            };
            let exchange = self.send_until_answered(&header, request, trailing)?;
            let error = match exchange.response {
                Response::Error(error) => error,
                _ => return Ok(exchange),
            };
            match error {
                Error::Busy { retry_after_ms } => {
                    busy_answers += 1;
                    if busy_answers >= attempts {
                        return Err(ClientError::Busy {
                            attempts,
                            retry_after_ms,
                        });
                    }
                    let floor = Duration::from_millis(10);
                    let wait = Duration::from_millis(u64::from(retry_after_ms))
                        .max(floor)
                        .min(self.config.max_busy_wait);
                    thread::sleep(wait);
                }
                // An earlier copy of these bytes may have run.
                Error::CounterTooOld {
                    may_have_run: true, ..
                } if exchange.sends > 1 => {
                    return Err(ClientError::AnswerLost {
                        request: request_name(request),
                    })
                }
                // It did not run: send it again, as a new request above
                // the switch's floor.
                Error::CounterTooOld { accepted_above, .. } if !counter_raised => {
                    self.counter.raise_above(accepted_above);
                    counter_raised = true;
                }
                Error::CounterTooOld { accepted_above, .. } => {
                    return Err(ClientError::CounterStillTooOld {
                        request: request_name(request),
                        sent: header.counter,
                        accepted_above,
                    })
                }
                Error::Unauthenticated => {
                    return Err(ClientError::BadMac {
                        switch: self.config.switch,
                    })
                }
                Error::WrongVersion { ours, oldest }
                    if ours < self.version && ours >= OLDEST_PROTOCOL_VERSION && oldest <= ours =>
                {
                    // Refused before it ran: the same request, at the
                    // switch's version, as a new request.
                    self.version = ours;
                }
                Error::WrongVersion { ours, oldest } => {
                    return Err(ClientError::WrongVersion {
                        switch_newest: ours,
                        switch_oldest: oldest,
                    })
                }
                Error::WrongSwitch { ours } => {
                    return Err(ClientError::WrongSwitch {
                        asked: target,
                        actual: ours,
                        switch: self.config.switch,
                    })
                }
                other => return Err(ClientError::Refused(other)),
            }
        }
    }

    /// Encodes the request once and sends those bytes until an answer to
    /// them arrives or the tries run out.
    fn send_until_answered(
        &mut self,
        header: &Header,
        request: &Request,
        trailing: &[u8],
    ) -> Result<Exchange, ClientError> {
        let len = encode_request(
            header,
            request,
            trailing,
            &self.config.key,
            &mut self.datagram,
        )?;
        let tries = self.config.retries.saturating_add(1);
        let mut refused = false;
        for send in 1..=tries {
            let sent_at = Instant::now();
            self.socket
                .send(&self.datagram[..len])
                .map_err(|source| ClientError::Io {
                    action: "send a request",
                    switch: self.config.switch,
                    source,
                })?;
            let deadline = sent_at + self.config.per_try;
            match self.await_answer(header, deadline, &mut refused)? {
                Some(response) => {
                    return Ok(Exchange {
                        response,
                        round_trip: sent_at.elapsed(),
                        sends: send,
                    })
                }
                None => continue,
            }
        }
        Err(ClientError::Timeout {
            switch: self.config.switch,
            tries,
            per_try: self.config.per_try,
            refused,
        })
    }

    /// Reads datagrams until the answer to `sent` arrives (`Some`) or the
    /// deadline passes (`None`), skipping anything else.
    fn await_answer(
        &mut self,
        sent: &Header,
        deadline: Instant,
        refused: &mut bool,
    ) -> Result<Option<Response>, ClientError> {
        loop {
            let now = Instant::now();
            let Some(left) = deadline
                .checked_duration_since(now)
                .filter(|d| !d.is_zero())
            else {
                return Ok(None);
            };
            // A zero read timeout is an error, and the deadline is not
            // reached, so at least a microsecond is left.
            let left = left.max(Duration::from_micros(1));
            self.socket
                .set_read_timeout(Some(left))
                .map_err(|source| ClientError::Io {
                    action: "set a read timeout",
                    switch: self.config.switch,
                    source,
                })?;
            let len = match self.socket.recv(&mut self.answer) {
                Ok(len) => len,
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                    ) =>
                {
                    return Ok(None)
                }
                Err(e) if e.kind() == io::ErrorKind::ConnectionRefused => {
                    // Nothing listens there now; it may be starting, so keep
                    // to the schedule of tries rather than give up at once.
                    *refused = true;
                    thread::sleep(left.min(Duration::from_millis(20)));
                    continue;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(source) => {
                    return Err(ClientError::Io {
                        action: "receive an answer",
                        switch: self.config.switch,
                        source,
                    })
                }
            };
            match decode_response(&self.answer[..len], &self.config.key, sent) {
                Ok(reply) => return Ok(Some(reply.response)),
                // The header can be read without the key: an answer to this
                // very request that fails our MAC comes from a switch that
                // holds another key (and refused ours).
                Err(DecodeError::BadMac { header })
                    if header.request_id == sent.request_id && header.counter == sent.counter =>
                {
                    return Err(ClientError::BadMac {
                        switch: self.config.switch,
                    })
                }
                // A late answer to an earlier request, a damaged datagram or
                // something that is not weft: not ours, keep waiting.
                Err(_) => continue,
            }
        }
    }

    fn new_request_id(&mut self) -> u32 {
        self.next_id = self.next_id.wrapping_add(1);
        self.next_id
    }

    fn new_counter(&mut self) -> u64 {
        self.counter.next(now_micros())
    }
}

/// Microseconds since the Unix epoch, the clock that request counters follow
/// (`weft_proto::auth`, "One counter per switch").
fn now_micros() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_micros()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}

/// The error for an answer that does not belong to `request`.
pub fn unexpected(request: &Request, response: &Response) -> ClientError {
    ClientError::UnexpectedResponse {
        request: request_name(request),
        response: format!("{response:?}"),
    }
}

/// A request's name, as messages mention it.
pub fn request_name(request: &Request) -> &'static str {
    match request {
        Request::Ping => "ping",
        Request::Identify => "identify",
        Request::Topology { .. } => "topology",
        Request::VirtualSwitch { .. } => "virtual switch",
        Request::Bind { .. } => "bind",
        Request::Unbind { .. } => "unbind",
        Request::SetNumVfs { .. } => "set-vfs",
        Request::PortControl { .. } => "port control",
        Request::ReadCounters { .. } => "read counters",
        Request::ClearCounters { .. } => "clear counters",
        Request::ReadEvents { .. } => "read events",
        Request::SaveConfig => "save config",
        Request::RestoreConfig => "restore config",
        Request::FirmwarePrepare { .. } => "firmware prepare",
        Request::FirmwareChunk { .. } => "firmware chunk",
        Request::FirmwareStatus => "firmware status",
        Request::FirmwarePrepareCommit => "firmware prepare-commit",
        Request::FirmwareCommit { .. } => "firmware commit",
        Request::FirmwareAbort => "firmware abort",
        Request::ResetArm { .. } => "reset arm",
        Request::ResetTrigger { .. } => "reset trigger",
        Request::CsrRead { .. } => "CSR read",
        Request::CsrWrite { .. } => "CSR write",
        Request::ConfigRead { .. } => "config read",
        Request::ConfigWrite { .. } => "config write",
        Request::OperationStatus { .. } => "operation status",
    }
}
