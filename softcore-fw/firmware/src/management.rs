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
//! name) or found in flash at start, there is nothing to check a request
//! with, so requests are dropped unanswered. A key from the console is
//! stored in flash with the replay counter's high-water mark
//! ([`crate::keystore`]); the insecure key never is, so it lasts until the
//! next restart.
//!
//! Firmware update requests are served by weft-fabric's
//! `firmware_update` over the flash's image slots and boot record
//! ([`crate::flash`]), with or without a data plane: a board whose data
//! plane does not answer can still be given a new image.

use weft_fabric::firmware_update::{FirmwareService, FirmwareUpdate};
use weft_fabric::management::BoardInfo;
use weft_fabric::persist::{Flash, PersistError};
use weft_proto::heapless::String;
use weft_proto::{
    Capabilities, Error, FirmwareVersion, Identity, Key, Request, Responder, Response, SwitchId,
    Verifier, OLDEST_PROTOCOL_VERSION, PROTOCOL_VERSION,
};
pub use weft_proto::{MANAGEMENT_UDP_PORT, MAX_DATAGRAM};
use weft_regs::capacity::PORTS;

use crate::fabric::Fabric;
use crate::flash::Region;
use crate::keystore::{self, KeyRecord};

/// Answers kept for retried requests: one client with a request in
/// flight and a few others, at about 1.5 KiB each.
pub const REPLY_CACHE_ENTRIES: usize = 4;

/// The board name Identify reports.
pub const BOARD_NAME: &str = "weft-soc";

/// The management server's state.
pub struct Management {
    switch: SwitchId,
    responder: Option<Responder<REPLY_CACHE_ENTRIES>>,
    /// The high-water mark stored in flash with the key in use; `None`
    /// while that key is not the stored one (the insecure key).
    stored_mark: Option<u64>,
    /// The firmware update, once the boot record was read.
    firmware: Option<FirmwareUpdate<Region>>,
}

impl Management {
    /// A server for switch `switch` with no key yet.
    pub const fn new(switch: SwitchId) -> Self {
        Management {
            switch,
            responder: None,
            stored_mark: None,
            firmware: None,
        }
    }

    /// Serves firmware update requests with `update` from now on.
    pub fn serve_firmware(&mut self, update: FirmwareUpdate<Region>) {
        self.firmware = Some(update);
    }

    /// The firmware update served, if the boot record could be read.
    pub fn firmware(&mut self) -> Option<&mut FirmwareUpdate<Region>> {
        self.firmware.as_mut()
    }

    /// Continues with the key and mark kept in flash: only counters above
    /// the mark are accepted, so requests from before the restart are
    /// refused. The refusal names the mark to a client holding the key
    /// (`Error::CounterTooOld`), so that it can send its request again
    /// above it instead of waiting for its clock to pass it.
    pub fn resume(&mut self, stored: KeyRecord) {
        let verifier = Verifier::resume(self.switch, stored.key, stored.mark);
        self.responder = Some(Responder::new(verifier));
        self.stored_mark = Some(stored.mark);
    }

    /// Checks requests with `key` from now on and stores it in `flash`; the
    /// replay counter carries over from the previous key. The key is in
    /// use even if storing it fails.
    pub fn set_key<F: Flash>(&mut self, key: Key, flash: &mut F) -> Result<(), PersistError> {
        self.use_key(key.clone());
        self.stored_mark = None;
        let accepted = self.last_accepted();
        self.stored_mark = Some(keystore::store(flash, &key, accepted)?);
        Ok(())
    }

    /// Checks requests with the insecure public key until the next
    /// restart; the flash keeps the stored key, if any.
    pub fn set_insecure(&mut self) {
        self.use_key(Key::insecure_public());
        self.stored_mark = None;
    }

    fn use_key(&mut self, key: Key) {
        match &mut self.responder {
            Some(responder) => responder.change_key(key),
            None => self.responder = Some(Responder::new(Verifier::new(self.switch, key))),
        }
    }

    fn last_accepted(&self) -> u64 {
        self.responder
            .as_ref()
            .map_or(0, |r| r.verifier().last_accepted())
    }

    /// Moves the stored high-water mark above the last accepted counter if
    /// that passed it; call after [`Management::answer`], before sending
    /// the answer. Whether flash was written.
    pub fn keep_mark<F: Flash>(&mut self, flash: &mut F) -> Result<bool, PersistError> {
        let (Some(mark), Some(responder)) = (self.stored_mark, &self.responder) else {
            return Ok(false);
        };
        let accepted = responder.verifier().last_accepted();
        if accepted <= mark {
            return Ok(false);
        }
        let key = responder.verifier().key().clone();
        self.stored_mark = Some(keystore::store(flash, &key, accepted)?);
        Ok(true)
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
        let firmware = &mut self.firmware;
        let authenticated = !responder.verifier().key().is_insecure();
        responder.answer(datagram, out, |request, trailing| {
            let firmware = firmware.as_mut().map(|f| f as &mut dyn FirmwareService);
            match fabric {
                Some(fabric) => {
                    let board = board_info(fabric.ports(), authenticated);
                    fabric.answer(&board, request, trailing, firmware)
                }
                None => execute(request, trailing, switch, authenticated, firmware),
            }
        })
    }
}

/// What the firmware answers on its own, without a fabric: Ping, Identify
/// and the firmware update.
fn execute(
    request: &Request,
    trailing: &[u8],
    switch: SwitchId,
    authenticated: bool,
    firmware: Option<&mut dyn FirmwareService>,
) -> Response {
    match request {
        Request::Ping => Response::Pong,
        Request::Identify => {
            Response::Identity(identity(switch, authenticated, firmware.is_some()))
        }
        _ => firmware
            .map_or(Err(Error::Unsupported), |f| f.serve(request, trailing))
            .unwrap_or_else(Response::Error),
    }
}

/// The switch's identity: no fabric capabilities until the fabric manager
/// runs here; firmware update when the boot record was read at start.
fn identity(switch: SwitchId, authenticated: bool, firmware_update: bool) -> Identity {
    let mut capabilities = Capabilities::NONE;
    if authenticated {
        capabilities = capabilities.union(Capabilities::AUTHENTICATED);
    }
    if firmware_update {
        capabilities = capabilities.union(Capabilities::FIRMWARE_UPDATE);
    }
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
pub fn board_info(ports: usize, authenticated: bool) -> BoardInfo {
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
