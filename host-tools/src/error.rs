//! Why a management request did not succeed, with what to do about it.
//!
//! Every variant carries the values that explain it, and its message ends in
//! an action the operator can take. [`ClientError::exit_code`] sorts the
//! causes into the process exit codes `weftctl` documents.

use std::fmt;
use std::io;
use std::net::SocketAddr;
use std::time::Duration;

use weft_proto::{EncodeError, Error, OperationId, SwitchId, PROTOCOL_VERSION};

/// Exit code for a failure on this machine (a socket, a file).
pub const EXIT_LOCAL: i32 = 1;
/// Exit code for a command line or configuration the operator must fix.
pub const EXIT_USAGE: i32 = 2;
/// Exit code for a request the switch answered with a refusal or failure.
pub const EXIT_REFUSED: i32 = 3;
/// Exit code for a switch that did not answer.
pub const EXIT_UNREACHABLE: i32 = 4;

/// A management request that did not succeed.
#[derive(Debug)]
pub enum ClientError {
    /// A socket operation on this machine failed.
    Io {
        /// What was being done.
        action: &'static str,
        /// The switch's address.
        switch: SocketAddr,
        /// The operating system's error.
        source: io::Error,
    },
    /// No valid answer arrived, after every try.
    Timeout {
        /// The switch's address.
        switch: SocketAddr,
        /// How many times the request was sent.
        tries: u32,
        /// How long each try waited.
        per_try: Duration,
        /// Whether the operating system reported that nothing listens on
        /// that port (an ICMP port unreachable).
        refused: bool,
    },
    /// The answer's MAC did not verify under our key: the switch refused our
    /// MAC, or it signs with another key.
    BadMac {
        /// The switch's address.
        switch: SocketAddr,
    },
    /// The switch does not speak this client's protocol version.
    WrongVersion {
        /// The newest version the switch speaks.
        switch_newest: u16,
        /// The oldest version the switch accepts.
        switch_oldest: u16,
    },
    /// The switch at the address is not the one the request named.
    WrongSwitch {
        /// The switch the request named.
        asked: SwitchId,
        /// The switch that answered.
        actual: SwitchId,
        /// Its address.
        switch: SocketAddr,
    },
    /// The switch stayed busy through every new request.
    Busy {
        /// How many requests were sent.
        attempts: u32,
        /// The wait the last answer asked for.
        retry_after_ms: u32,
    },
    /// A request sent more than once was refused as one that may have run:
    /// the switch may have handled an earlier copy, but its answer is gone
    /// from the switch's reply cache.
    AnswerLost {
        /// The request, by name.
        request: &'static str,
    },
    /// The switch refused a request's counter as too old even after the
    /// client moved its counter past the floor the switch named: the floor
    /// moved on in between (another client sending with the same key), so
    /// the client stopped rather than chase it.
    CounterStillTooOld {
        /// The request, by name.
        request: &'static str,
        /// The counter of the second refused request.
        sent: u64,
        /// The floor the second refusal named.
        accepted_above: u64,
    },
    /// The switch refused or failed the request.
    Refused(Error),
    /// A request could not be encoded (too much trailing data).
    Encode(EncodeError),
    /// The switch answered with a response that does not fit the request.
    UnexpectedResponse {
        /// The request, by name.
        request: &'static str,
        /// What came back.
        response: String,
    },
    /// A background operation finished with an error.
    OperationFailed {
        /// The operation.
        op: OperationId,
        /// Why it failed.
        reason: Error,
    },
    /// A background operation did not finish before the deadline.
    OperationTimedOut {
        /// The operation.
        op: OperationId,
        /// How long it was polled.
        waited: Duration,
        /// The last progress it reported.
        percent: u8,
    },
    /// The topology kept changing while it was read page by page.
    TopologyUnstable {
        /// How many walks were started.
        walks: u32,
    },
    /// The switch's paging made no progress or never ended.
    TopologyRunaway {
        /// Pages read before giving up.
        pages: u32,
    },
    /// A firmware transfer made no progress.
    FirmwareStalled {
        /// The offset the switch kept asking for.
        offset: u32,
        /// How many chunks in a row were refused or not advanced.
        refusals: u32,
    },
    /// The file is not a firmware image for a flash slot
    /// (`weft_fabric::boot_image`): the boot loader would never start it.
    NotFirmwareImage {
        /// Its first bytes (up to four).
        start: Vec<u8>,
    },
    /// The firmware image cannot be sent: empty, or larger than the protocol's
    /// 32-bit size.
    FirmwareImageSize {
        /// Its size in bytes.
        size: u64,
    },
    /// The update under way on the switch is for an image of another size
    /// than the file given to resume it with.
    FirmwareResumeMismatch {
        /// The size of the image the switch is receiving.
        pending: u32,
        /// The size of the file.
        image: u32,
    },
    /// After the last chunk, the switch did not report the image verified.
    FirmwareNotVerified {
        /// The state it reported, as text.
        state: String,
    },
}

impl ClientError {
    /// The process exit code for this failure: [`EXIT_UNREACHABLE`] when the
    /// switch did not answer, [`EXIT_REFUSED`] when it answered no,
    /// [`EXIT_LOCAL`] otherwise.
    pub fn exit_code(&self) -> i32 {
        match self {
            ClientError::Timeout { .. } => EXIT_UNREACHABLE,
            ClientError::Io { .. } | ClientError::Encode(_) => EXIT_LOCAL,
            _ => EXIT_REFUSED,
        }
    }

    /// The switch's refusal, if that is what this is.
    pub fn refusal(&self) -> Option<&Error> {
        match self {
            ClientError::Refused(error) => Some(error),
            ClientError::OperationFailed { reason, .. } => Some(reason),
            _ => None,
        }
    }
}

impl fmt::Display for ClientError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ClientError::Io {
                action,
                switch,
                source,
            } => write!(
                f,
                "could not {action} for switch {switch}: {source}; check this machine's network \
                 configuration"
            ),
            ClientError::Timeout {
                switch,
                tries,
                per_try,
                refused,
            } => {
                write!(
                    f,
                    "no answer from {switch} after {tries} tries of {} ms each",
                    per_try.as_millis()
                )?;
                if *refused {
                    f.write_str(" (nothing is listening on that port)")?;
                }
                f.write_str(
                    "; check the address and port (--switch), that the switch is powered and \
                     reachable, or raise --retries / --timeout-ms",
                )
            }
            ClientError::BadMac { switch } => write!(
                f,
                "the switch rejected the MAC: check the key (the switch at {switch} does not hold \
                 the key given with --key, --key-file or WEFT_KEY, or runs in insecure mode; \
                 use --insecure only if it does)"
            ),
            ClientError::WrongVersion {
                switch_newest,
                switch_oldest,
            } => write!(
                f,
                "the switch speaks protocol versions {switch_oldest} to {switch_newest}, but this \
                 weftctl speaks version {PROTOCOL_VERSION}; use a weftctl that matches the \
                 switch's firmware, or update the firmware"
            ),
            ClientError::WrongSwitch {
                asked,
                actual,
                switch,
            } => write!(
                f,
                "the switch at {switch} is {:#x}, not {:#x}; check --switch-id and --switch, or \
                 leave --switch-id out to manage whichever switch answers there",
                actual.0, asked.0
            ),
            ClientError::Busy {
                attempts,
                retry_after_ms,
            } => write!(
                f,
                "the switch was still busy after {attempts} requests (it asks to wait \
                 {retry_after_ms} ms); wait for its current operation to finish and try again"
            ),
            ClientError::AnswerLost { request } => write!(
                f,
                "the switch may have handled the {request} request but its answer was lost; read the \
                 state back (for example with `weftctl topology` or `weftctl op-status`) before \
                 repeating it"
            ),
            ClientError::CounterStillTooOld {
                request,
                sent,
                accepted_above,
            } => write!(
                f,
                "the switch refused the {request} request's counter twice in a row (it did not \
                 run it): counter {sent} was sent above the floor it named first, but it now \
                 accepts only counters above {accepted_above}; another client may be sending \
                 requests with the same key, so try again"
            ),
            ClientError::Refused(error) => {
                write!(f, "{error}")?;
                match error {
                    Error::UpdateInProgress => {
                        f.write_str(" (`weftctl firmware abort` abandons it)")
                    }
                    Error::NoSuchOperation { .. } => {
                        f.write_str(" (it may have finished long ago)")
                    }
                    Error::NoSuchPort { .. } => {
                        f.write_str("; `weftctl identify` shows how many ports it has")
                    }
                    Error::NoSuchHost { .. } | Error::NoSuchEndpoint { .. } => {
                        f.write_str("; `weftctl topology` lists the hosts and functions")
                    }
                    Error::NoSuchSlot { .. } => {
                        f.write_str("; `weftctl vswitch <host>` lists its slots")
                    }
                    Error::Unsupported => {
                        f.write_str("; `weftctl identify` lists its capabilities")
                    }
                    _ => Ok(()),
                }
            }
            ClientError::Encode(error) => write!(f, "could not build the request: {error}"),
            ClientError::UnexpectedResponse { request, response } => write!(
                f,
                "the switch answered the {request} request with {response}, which does not \
                 belong to it; the switch's firmware may be faulty, so report this to its \
                 maintainers"
            ),
            ClientError::OperationFailed { op, reason } => {
                write!(f, "operation {} failed: {reason}", op.0)
            }
            ClientError::OperationTimedOut {
                op,
                waited,
                percent,
            } => write!(
                f,
                "operation {} was still running after {:.1} s ({percent}% done); follow it with \
                 `weftctl op-status {}` or raise --op-timeout-ms",
                op.0,
                waited.as_secs_f64(),
                op.0
            ),
            ClientError::TopologyUnstable { walks } => write!(
                f,
                "the fabric changed during each of {walks} attempts to read its topology; try \
                 again when binds and hot-plug events have settled"
            ),
            ClientError::TopologyRunaway { pages } => write!(
                f,
                "the switch's topology listing did not end after {pages} pages or its cursor \
                 went backwards; the switch's firmware may be faulty, so report this"
            ),
            ClientError::FirmwareStalled { offset, refusals } => write!(
                f,
                "the firmware transfer made no progress at offset {offset} after {refusals} \
                 chunks; check `weftctl firmware status`, then run `weftctl firmware abort` \
                 and start the update again"
            ),
            ClientError::NotFirmwareImage { start } => write!(
                f,
                "the file starts with {start:02x?}, not a weft firmware image (\"WFTI\"): the \
                 boot loader would not start it. Send the image `cargo xtask firmware` writes \
                 next to the firmware's ELF (weft-firmware.img), not the ELF itself"
            ),
            ClientError::FirmwareImageSize { size } => write!(
                f,
                "a {size}-byte file cannot be a firmware image (it must be between 1 byte and \
                 4 GiB); check the file name"
            ),
            ClientError::FirmwareResumeMismatch { pending, image } => write!(
                f,
                "the switch is receiving a {pending}-byte image, but this file has {image} bytes; \
                 resume with the same file, or run `weftctl firmware abort` and start again"
            ),
            ClientError::FirmwareNotVerified { state } => write!(
                f,
                "every byte of the image was sent, but the switch reports the update as \
                 {state}; check `weftctl firmware status`, abort and start again"
            ),
        }
    }
}

impl std::error::Error for ClientError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ClientError::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

impl From<EncodeError> for ClientError {
    fn from(error: EncodeError) -> Self {
        ClientError::Encode(error)
    }
}
