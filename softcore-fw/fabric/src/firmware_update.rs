//! Firmware update: a new image written into the flash partition (image
//! slot) the switch is not running from, checked whole against its
//! SHA-256 (FIPS 180-4), committed in two phases, booted on trial and
//! booted back from if it never checks in.
//!
//! The board has two image slots, A and B, a boot record and a staging
//! record, each a [`Flash`] region; the firmware's and the simulator's regions are laid
//! out in `weft-firmware`'s `flash` module. [`FirmwareUpdate`] answers the
//! update requests of `weft-proto` ([`FirmwareService`]):
//!
//! 1. `FirmwarePrepare` names the image's size and digest. The image goes
//!    to the slot not running; the running one is never written. A
//!    prepare of the image already being received (same size and digest)
//!    resumes it: nothing is erased, and the next chunk that does not
//!    start where the transfer stands is refused with `BadChunk` naming
//!    that offset. A prepare of another image while one is under way is
//!    refused with `UpdateInProgress` (abort first). A new image is named
//!    in the staging record before anything is written (see below).
//! 2. `FirmwareChunk` writes up to [`MAX_CHUNK`] bytes at the offset the
//!    transfer stands at, erasing each sector ([`SECTOR_SIZE`]) of the
//!    slot as the image reaches it, so no request waits for a whole slot's
//!    erase, and reads the chunk back. Any other offset, an empty or too
//!    long chunk, or one past the image's end is refused with `BadChunk {
//!    resume_at }`. A flash failure is answered with `FlashFailed`, and the
//!    transfer steps back to the start of the sector it was in (that sector
//!    is erased again): `FirmwareStatus` then names the offset to resume
//!    from.
//! 3. The chunk that completes the image makes the switch read the whole
//!    slot back and hash it: the image is `Verified` if the SHA-256 is the
//!    announced one, `Failed { DigestMismatch }` if not (a new prepare
//!    starts again).
//! 4. `FirmwarePrepareCommit` of a verified image returns a [`Token`];
//!    `FirmwareCommit` with it writes the boot record: "start the new slot
//!    on trial at the next boot, the running slot is the good one". A
//!    commit repeated with the same token succeeds without writing again,
//!    and a prepare-commit after the commit returns the same token, so a
//!    retried commit never acts twice; any other token is `BadToken`. The
//!    commit does not restart the switch: the next start (a reset, the
//!    watchdog, a power cycle) boots the trial.
//! 5. `FirmwareAbort` discards the update; after a commit, it rewrites the
//!    boot record to keep booting the running slot.
//!
//! At each start, [`boot`] reads the boot record and picks the slot to run
//! ([`select_boot`]): the good slot; or, once, a committed trial slot,
//! recording that the trial started; or, when a trial started before and
//! never checked in, the good slot again (boot-back), dropping the trial.
//! The running image checks in ([`FirmwareUpdate::check_in`]) once it is up,
//! which makes the trial slot the good one. A board without a record boots
//! slot A.
//!
//! A trial that hangs must still come back: the boot loader arms the SoC's
//! watchdog for [`TRIAL_CHECK_IN_MS`] before it starts a trial's image, and
//! the firmware disarms that arm once its check-in is stored. A trial that does
//! not check in within that time is reset by the watchdog, and the next
//! start boots back. The watchdog guards the trial only: after the check-in
//! nothing kicks it (the fabric's start, an erase and the hash of a whole
//! slot hold the main loop for up to a second, which would need kicks deep
//! in the fabric library), and the firmware arms it again only to carry out
//! a requested reset. An image that checks in without disarming it is
//! reset once more, and then starts as the good image, unarmed.
//!
//! The update's milestones are events of the fabric manager's log
//! ([`crate::events::Event`]): the image staged (written whole and its
//! SHA-256 checked), committed, started on trial
//! ([`FirmwareUpdate::note_start`]), checked in, and booted back from. The
//! update holds them until the management handler takes them
//! ([`FirmwareService::take_event`]).
//!
//! The tokens are the first four bytes of a SHA-256 over the image's
//! digest, the running slot and a count of arms in this run, so a token
//! armed for another image, or before a newer arm, does not match.
//!
//! The boot record is a [`crate::persist`] two-slot record, magic "WFTF",
//! version 1, whose payload is (offsets from the record's start,
//! little-endian):
//!
//! | offset | size | field                                                   |
//! |--------|------|---------------------------------------------------------|
//! | 12     | 1    | the good slot: 0 for A, 1 for B                         |
//! | 13     | 1    | the trial: 0 none, 1 committed, 2 started and not checked in |
//! | 14     | 1    | the trial's slot (0 without a trial)                    |
//! | 15     | 1    | reserved, 0                                             |
//! | 16     | 4    | the trial image's size (0 without a trial)              |
//! | 20     | 32   | the trial image's SHA-256 (0 without a trial)           |
//!
//! The boot loader (`softcore-fw/boot`) runs [`boot`] after every reset
//! and starts the slot it picks only if the slot's image checks against
//! its own header's SHA-256 ([`crate::boot_image`]; the good slot's
//! digest is not in the record), reading no more of a trial's slot than
//! the trial's size recorded here.
//!
//! # Resuming after a restart
//!
//! An upload survives a restart of the switch through the staging record
//! ([`StagingRecord`], a [`crate::persist`] two-slot record, magic "WFTS",
//! version 1): the prepare stores the image's size and digest and the slot
//! it goes to, and each time the transfer passes a multiple of
//! [`CHECKPOINT_BYTES`] the offset it has written and read back up to. A
//! start ([`FirmwareUpdate::new`]) finds the upload there and stands at
//! that checkpoint: `FirmwareStatus` reports it as `Receiving` with the
//! checkpoint as `received`, a prepare of the same image resumes, and a
//! chunk elsewhere is refused with `BadChunk` naming it. The sector at the
//! checkpoint is erased again when the transfer reaches it. The record
//! only says where to go on from: the image becomes `Verified`, and can be
//! committed, only when its last chunk has made the switch hash the whole
//! slot as the flash holds it. A commit or an abort clears the record; a
//! record for the running slot, or found while the running image is on
//! trial (the other slot is its fallback), is not resumed.
//!
//! | offset | size | field                                                   |
//! |--------|------|---------------------------------------------------------|
//! | 12     | 1    | 1 while an upload is under way, 0 when none is          |
//! | 13     | 1    | its slot: 0 for A, 1 for B                              |
//! | 14     | 2    | reserved, 0                                             |
//! | 16     | 4    | the image's size                                        |
//! | 20     | 32   | the image's SHA-256                                     |
//! | 52     | 4    | bytes written and read back from the slot's start       |

use heapless::Deque;
use sha2::{Digest as _, Sha256};
use weft_proto::{
    Digest, Error, FirmwareStatus, FlashOp, ImageSlot, Request, Response, Token, UpdateState,
    MAX_CHUNK,
};
use weft_regs::soc::spi_flash::SECTOR_SIZE;

use crate::boot_image::Handoff;
use crate::events::Event;
use crate::persist::{load_record, save_record, Flash, FlashError, PersistError, Record};

/// What answers the firmware update requests of `weft-proto`; the
/// management handler hands them to it
/// ([`crate::management::Hardware::firmware`]).
pub trait FirmwareService {
    /// The answer to `request`, a firmware update request, with the bulk
    /// bytes `trailing` after it (a chunk's); any other request is
    /// [`Error::Unsupported`].
    fn serve(&mut self, request: &Request, trailing: &[u8]) -> Result<Response, Error>;

    /// The oldest event of the update that has not been taken yet, for the
    /// fabric manager's event log (the management handler takes them all
    /// before each request).
    fn take_event(&mut self) -> Option<Event>;
}

/// An image as its prepare announced it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ImageId {
    /// Its size in bytes.
    pub size: u32,
    /// Its SHA-256.
    pub digest: Digest,
}

/// A committed image that boots on trial.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Trial {
    /// The slot it is in.
    pub slot: ImageSlot,
    /// Whether a boot started it (and it has not checked in since).
    pub started: bool,
    /// The image.
    pub image: ImageId,
}

/// Which slot boots: the boot record's payload (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BootRecord {
    /// The slot of the last image that checked in.
    pub active: ImageSlot,
    /// A committed image to try, if any.
    pub trial: Option<Trial>,
}

impl Default for BootRecord {
    /// A new board's: slot A, no trial.
    fn default() -> Self {
        BootRecord {
            active: ImageSlot::A,
            trial: None,
        }
    }
}

/// How long a trial has to check in after the boot loader starts it before
/// the watchdog resets it (and the next start boots back): 10 s. The
/// firmware checks in on the first pass of its main loop after its fabric's
/// start, which begins 100 ms after reset; the reference experiment's four
/// switches enumerate in 31 ms at 125 MHz (README), so the firmware checks
/// in well under a second, and a fabric many times larger still fits. It is
/// within the watchdog's longest timeout (2^32 cycles, 34 s at the
/// reference 125 MHz).
pub const TRIAL_CHECK_IN_MS: u32 = 10_000;

/// The boot record's magic: "WFTF".
pub const BOOT_RECORD_MAGIC: u32 = u32::from_le_bytes(*b"WFTF");

/// The boot record's layout version.
pub const BOOT_RECORD_VERSION: u16 = 1;

const BOOT_PAYLOAD_LEN: usize = 8 + 32;

/// The longest boot record, header and CRC included.
pub const BOOT_RECORD_LEN: usize = crate::persist::RECORD_OVERHEAD + BOOT_PAYLOAD_LEN;

fn slot_byte(slot: ImageSlot) -> u8 {
    match slot {
        ImageSlot::A => 0,
        ImageSlot::B => 1,
    }
}

fn slot_of(byte: u8) -> Option<ImageSlot> {
    match byte {
        0 => Some(ImageSlot::A),
        1 => Some(ImageSlot::B),
        _ => None,
    }
}

/// The slot that is not `slot`.
pub fn other(slot: ImageSlot) -> ImageSlot {
    match slot {
        ImageSlot::A => ImageSlot::B,
        ImageSlot::B => ImageSlot::A,
    }
}

impl Record for BootRecord {
    const MAGIC: u32 = BOOT_RECORD_MAGIC;
    const VERSION: u16 = BOOT_RECORD_VERSION;
    type Bytes = [u8; BOOT_RECORD_LEN];

    fn bytes() -> Self::Bytes {
        [0; BOOT_RECORD_LEN]
    }

    fn encode_payload(&self, out: &mut [u8]) -> usize {
        let payload = &mut out[..BOOT_PAYLOAD_LEN];
        payload.fill(0);
        payload[0] = slot_byte(self.active);
        if let Some(trial) = self.trial {
            payload[1] = if trial.started { 2 } else { 1 };
            payload[2] = slot_byte(trial.slot);
            payload[4..8].copy_from_slice(&trial.image.size.to_le_bytes());
            payload[8..40].copy_from_slice(&trial.image.digest.0);
        }
        BOOT_PAYLOAD_LEN
    }

    fn decode_payload(payload: &[u8]) -> Option<Self> {
        let payload: &[u8; BOOT_PAYLOAD_LEN] = payload.try_into().ok()?;
        let active = slot_of(payload[0])?;
        let started = match payload[1] {
            0 => {
                return Some(BootRecord {
                    active,
                    trial: None,
                })
            }
            1 => false,
            2 => true,
            _ => return None,
        };
        let slot = slot_of(payload[2]).filter(|&slot| slot != active)?;
        let mut digest = [0; 32];
        digest.copy_from_slice(&payload[8..40]);
        Some(BootRecord {
            active,
            trial: Some(Trial {
                slot,
                started,
                image: ImageId {
                    size: u32::from_le_bytes([payload[4], payload[5], payload[6], payload[7]]),
                    digest: Digest(digest),
                },
            }),
        })
    }
}

/// Where an upload stands, as its staging record keeps it across a
/// restart (see the module docs): the image, the slot it goes to, and how
/// much of it, from the slot's start, was written and read back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Staging {
    /// The slot being written: the one not running when the upload began.
    pub slot: ImageSlot,
    /// The image, as its prepare announced it.
    pub image: ImageId,
    /// Bytes from the slot's start written and read back: a multiple of
    /// [`CHECKPOINT_BYTES`] below the image's size.
    pub written: u32,
}

/// The staging record: the upload under way, or none.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StagingRecord(pub Option<Staging>);

/// The staging record's magic: "WFTS".
pub const STAGING_RECORD_MAGIC: u32 = u32::from_le_bytes(*b"WFTS");

/// The staging record's layout version.
pub const STAGING_RECORD_VERSION: u16 = 1;

const STAGING_PAYLOAD_LEN: usize = 8 + 32 + 4;

/// The longest staging record, header and CRC included.
pub const STAGING_RECORD_LEN: usize = crate::persist::RECORD_OVERHEAD + STAGING_PAYLOAD_LEN;

/// How far apart an upload's checkpoints are: each time it passes a
/// multiple of this many bytes (eight sectors, 32 KiB), the staging record
/// is stored again. A record costs a sector erase (typically 45 ms), about
/// an eighth of the transfer's own erases; a restart loses at most this
/// much of the transfer.
pub const CHECKPOINT_BYTES: u32 = 8 * SECTOR_SIZE;

impl Record for StagingRecord {
    const MAGIC: u32 = STAGING_RECORD_MAGIC;
    const VERSION: u16 = STAGING_RECORD_VERSION;
    type Bytes = [u8; STAGING_RECORD_LEN];

    fn bytes() -> Self::Bytes {
        [0; STAGING_RECORD_LEN]
    }

    fn encode_payload(&self, out: &mut [u8]) -> usize {
        let payload = &mut out[..STAGING_PAYLOAD_LEN];
        payload.fill(0);
        if let Some(staging) = self.0 {
            payload[0] = 1;
            payload[1] = slot_byte(staging.slot);
            payload[4..8].copy_from_slice(&staging.image.size.to_le_bytes());
            payload[8..40].copy_from_slice(&staging.image.digest.0);
            payload[40..44].copy_from_slice(&staging.written.to_le_bytes());
        }
        STAGING_PAYLOAD_LEN
    }

    fn decode_payload(payload: &[u8]) -> Option<Self> {
        let payload: &[u8; STAGING_PAYLOAD_LEN] = payload.try_into().ok()?;
        let word = |at: usize| {
            u32::from_le_bytes([
                payload[at],
                payload[at + 1],
                payload[at + 2],
                payload[at + 3],
            ])
        };
        match payload[0] {
            0 => Some(StagingRecord(None)),
            1 => {
                let mut digest = [0; 32];
                digest.copy_from_slice(&payload[8..40]);
                Some(StagingRecord(Some(Staging {
                    slot: slot_of(payload[1])?,
                    image: ImageId {
                        size: word(4),
                        digest: Digest(digest),
                    },
                    written: word(40),
                })))
            }
            _ => None,
        }
    }
}

/// Why a slot boots.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BootKind {
    /// The good slot, with no trial pending.
    Active,
    /// A committed image, started on trial for the first time.
    Trial,
    /// The good slot again: the trial started before and never checked in.
    Rollback,
}

/// What a start does: the slot it runs and the boot record to store
/// before running it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BootChoice {
    /// The slot to start.
    pub slot: ImageSlot,
    /// Why.
    pub kind: BootKind,
    /// The record to store first (the same as before for [`BootKind::Active`]).
    pub record: BootRecord,
}

/// The slot a start runs, given the boot record it finds (see the module
/// docs): a trial runs once, and a trial found already started never
/// checked in, so the good slot runs instead.
pub fn select_boot(record: &BootRecord) -> BootChoice {
    match record.trial {
        None => BootChoice {
            slot: record.active,
            kind: BootKind::Active,
            record: *record,
        },
        Some(trial) if !trial.started => BootChoice {
            slot: trial.slot,
            kind: BootKind::Trial,
            record: BootRecord {
                active: record.active,
                trial: Some(Trial {
                    started: true,
                    ..trial
                }),
            },
        },
        Some(_) => BootChoice {
            slot: record.active,
            kind: BootKind::Rollback,
            record: BootRecord {
                active: record.active,
                trial: None,
            },
        },
    }
}

/// A start: reads the boot record in `flash` (a new board's when there is
/// none), picks the slot to run with [`select_boot`] and stores the record
/// it leaves before returning the choice.
pub fn boot<F: Flash + ?Sized>(flash: &mut F) -> Result<BootChoice, PersistError> {
    let found = load_record::<BootRecord, F>(flash)?.unwrap_or_default();
    let choice = select_boot(&found);
    if choice.record != found {
        save_record(flash, &choice.record)?;
    }
    Ok(choice)
}

/// Where an update stands (see the module docs).
#[derive(Clone, Debug, PartialEq, Eq)]
enum State {
    Idle,
    Receiving {
        image: ImageId,
        /// Bytes written in order: where the next chunk goes.
        received: u32,
        /// The slot is erased below this (a multiple of [`SECTOR_SIZE`]).
        erased_to: u32,
    },
    Verified {
        image: ImageId,
    },
    Failed {
        image: ImageId,
        received: u32,
        reason: Error,
    },
    Armed {
        image: ImageId,
        token: Token,
    },
    Committed {
        image: ImageId,
        token: Token,
    },
}

/// The firmware update of a board with image slots and a boot record on
/// flash regions of type `F` (see the module docs).
pub struct FirmwareUpdate<F> {
    images: [F; 2],
    boot_flash: F,
    staging_flash: F,
    running: ImageSlot,
    record: BootRecord,
    state: State,
    arms: u32,
    events: Deque<Event, PENDING_EVENTS>,
}

/// Events the update holds until they are taken: a start's and its
/// check-in, or a request's, between two requests.
const PENDING_EVENTS: usize = 4;

/// The protocol's error for a flash failure while doing `op`.
fn flash_failed(op: FlashOp) -> Error {
    Error::FlashFailed { op }
}

/// The protocol's error for a boot record that could not be stored.
fn record_failed(error: PersistError) -> Error {
    flash_failed(match error {
        PersistError::VerifyFailed { .. } => FlashOp::Verify,
        PersistError::Flash(_) | PersistError::RegionTooSmall { .. } => FlashOp::Program,
    })
}

impl<F: Flash> FirmwareUpdate<F> {
    /// The update of a board running from slot `running` (as [`boot`]
    /// chose), with slots A and B in `images`, the boot record in
    /// `boot_flash` and the staging record in `staging_flash`, which are
    /// read now: an upload the staging record names resumes from its last
    /// checkpoint, if it goes to the slot not running and the running image
    /// is not a trial (whose fallback that slot is). A staging record that
    /// cannot be read resumes nothing.
    pub fn new(
        images: [F; 2],
        mut boot_flash: F,
        mut staging_flash: F,
        running: ImageSlot,
    ) -> Result<Self, PersistError> {
        let record = load_record::<BootRecord, F>(&mut boot_flash)?.unwrap_or_default();
        let staged = load_record::<StagingRecord, F>(&mut staging_flash)
            .ok()
            .flatten()
            .and_then(|record| record.0);
        let mut update = FirmwareUpdate {
            images,
            boot_flash,
            staging_flash,
            running,
            record,
            state: State::Idle,
            arms: 0,
            events: Deque::new(),
        };
        if let Some(staging) = staged.filter(|s| update.resumable(s)) {
            update.state = State::Receiving {
                image: staging.image,
                received: staging.written,
                // The sector at the checkpoint may hold bytes written after
                // it: it is erased again when the transfer reaches it.
                erased_to: staging.written,
            };
        }
        Ok(update)
    }

    /// Whether `staging` names an upload this start may go on with: to
    /// the slot not running, off trial, of an image that fits, stopped at a
    /// checkpoint before its end.
    fn resumable(&self, staging: &Staging) -> bool {
        staging.slot == other(self.running)
            && !self.on_trial()
            && (1..=self.max_image()).contains(&staging.image.size)
            && staging.written < staging.image.size
            && staging.written.is_multiple_of(CHECKPOINT_BYTES)
    }

    /// Notes how this start came about, as the boot loader's `handoff` (or
    /// [`boot`], for an image started directly) says: a start of the trial
    /// image, or a boot-back to the good one, is an event.
    pub fn note_start(&mut self, handoff: &Handoff) {
        if handoff.running != Some(handoff.chosen) {
            // The loader passed over the slot it picked: not what the record says.
            return;
        }
        let slot = handoff.chosen;
        match handoff.kind {
            BootKind::Active => {}
            BootKind::Trial => self.log(Event::FirmwareTrialStarted { slot }),
            BootKind::Rollback => self.log(Event::FirmwareBootedBack { slot }),
        }
    }

    /// Holds `event` until it is taken, dropping the oldest held if full.
    fn log(&mut self, event: Event) {
        if self.events.is_full() {
            self.events.pop_front();
        }
        // There is room: the oldest was just dropped if there was none.
        let _ = self.events.push_back(event);
    }

    /// The slot the running firmware came from.
    pub fn running(&self) -> ImageSlot {
        self.running
    }

    /// The boot record as stored.
    pub fn record(&self) -> &BootRecord {
        &self.record
    }

    /// The flash region of image slot `slot`.
    pub fn image_flash(&self, slot: ImageSlot) -> &F {
        &self.images[usize::from(slot_byte(slot))]
    }

    /// The flash region of the boot record.
    pub fn boot_flash(&self) -> &F {
        &self.boot_flash
    }

    /// The flash region of the staging record.
    pub fn staging_flash(&self) -> &F {
        &self.staging_flash
    }

    /// The flash regions back, for a restart: slots A and B, the boot
    /// record's and the staging record's.
    pub fn into_flash(self) -> ([F; 2], F, F) {
        (self.images, self.boot_flash, self.staging_flash)
    }

    /// The largest image a slot holds: the smaller slot, in whole sectors.
    pub fn max_image(&self) -> u32 {
        let smaller = self.images[0].size().min(self.images[1].size());
        smaller - smaller % SECTOR_SIZE
    }

    /// Marks the running image good, if it is a trial that started: the
    /// next starts run it. Whether the record changed.
    pub fn check_in(&mut self) -> Result<bool, PersistError> {
        match self.record.trial {
            Some(trial) if trial.started && trial.slot == self.running => {
                let record = BootRecord {
                    active: self.running,
                    trial: None,
                };
                save_record(&mut self.boot_flash, &record)?;
                self.record = record;
                self.log(Event::FirmwareCheckedIn { slot: self.running });
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    /// Whether the running image is a trial that has not checked in: its
    /// fallback, the other slot, must not be overwritten.
    fn on_trial(&self) -> bool {
        self.record
            .trial
            .is_some_and(|t| t.started && t.slot == self.running)
    }

    /// The update's state, for `FirmwareStatus`.
    pub fn status(&self) -> FirmwareStatus {
        let (state, size, received) = match &self.state {
            State::Idle if self.on_trial() => (UpdateState::Trial, 0, 0),
            State::Idle => (UpdateState::Idle, 0, 0),
            State::Receiving {
                image, received, ..
            } => (UpdateState::Receiving, image.size, *received),
            State::Verified { image } => (UpdateState::Verified, image.size, image.size),
            State::Failed {
                image,
                received,
                reason,
            } => (
                UpdateState::Failed {
                    reason: reason.clone(),
                },
                image.size,
                *received,
            ),
            State::Armed { image, .. } => (UpdateState::CommitArmed, image.size, image.size),
            // Nothing is under way; `next_boot` shows the committed slot.
            State::Committed { image, .. } => (UpdateState::Idle, image.size, image.size),
        };
        FirmwareStatus {
            state,
            size,
            received,
            running: self.running,
            next_boot: select_boot(&self.record).slot,
        }
    }

    /// Starts (or resumes) receiving the image of `size` bytes with SHA-256 `digest`.
    pub fn prepare(&mut self, size: u32, digest: Digest) -> Result<(), Error> {
        let image = ImageId { size, digest };
        if size == 0 {
            // An empty image is no update.
            return Err(Error::Malformed);
        }
        let max = self.max_image();
        if size > max {
            return Err(Error::FirmwareTooLarge { max });
        }
        if self.on_trial() {
            return Err(Error::UpdateInProgress);
        }
        match &self.state {
            State::Receiving { image: pending, .. } | State::Verified { image: pending }
                if *pending == image =>
            {
                Ok(())
            }
            State::Armed { image: pending, .. } if *pending == image => {
                // A new arm is needed: the old token no longer commits.
                self.state = State::Verified { image };
                Ok(())
            }
            State::Receiving { .. }
            | State::Verified { .. }
            | State::Armed { .. }
            | State::Committed { .. } => Err(Error::UpdateInProgress),
            State::Idle | State::Failed { .. } => {
                // Named before any byte is written: a restart finds this
                // image's upload, not an earlier one's.
                let staging = Staging {
                    slot: other(self.running),
                    image,
                    written: 0,
                };
                save_record(&mut self.staging_flash, &StagingRecord(Some(staging)))
                    .map_err(record_failed)?;
                self.state = State::Receiving {
                    image,
                    received: 0,
                    erased_to: 0,
                };
                Ok(())
            }
        }
    }

    /// Writes `bytes` at `offset` of the image; the offset to send next.
    pub fn chunk(&mut self, offset: u32, bytes: &[u8]) -> Result<u32, Error> {
        let target = usize::from(slot_byte(other(self.running)));
        let (image, received, erased_to) = match &mut self.state {
            State::Receiving {
                image,
                received,
                erased_to,
            } => (*image, received, erased_to),
            State::Idle => return Err(Error::NoUpdateInProgress),
            State::Failed { reason, .. } => return Err(reason.clone()),
            State::Verified { image }
            | State::Armed { image, .. }
            | State::Committed { image, .. } => {
                return Err(Error::BadChunk {
                    resume_at: image.size,
                })
            }
        };
        let fits = u32::try_from(bytes.len())
            .ok()
            .and_then(|len| offset.checked_add(len))
            .is_some_and(|end| end <= image.size);
        if offset != *received || bytes.is_empty() || bytes.len() > MAX_CHUNK || !fits {
            return Err(Error::BadChunk {
                resume_at: *received,
            });
        }
        let slot = &mut self.images[target];
        if let Err(op) = write_checked(slot, offset, bytes, erased_to) {
            // The sector may hold half-programmed bytes: erase it again and
            // resume from its start.
            *received = offset - offset % SECTOR_SIZE;
            *erased_to = *received;
            return Err(flash_failed(op));
        }
        let before = *received;
        *received += bytes.len() as u32;
        let next = *received;
        if next < image.size && next / CHECKPOINT_BYTES > before / CHECKPOINT_BYTES {
            let staging = Staging {
                slot: other(self.running),
                image,
                written: next - next % CHECKPOINT_BYTES,
            };
            // A checkpoint not stored leaves the previous one, which a
            // restart resumes from: nothing the transfer needs is lost.
            let _ = save_record(&mut self.staging_flash, &StagingRecord(Some(staging)));
        }
        if next == image.size {
            self.state = match digest_of(slot, image.size) {
                Ok(digest) if digest == image.digest => State::Verified { image },
                Ok(_) => State::Failed {
                    image,
                    received: next,
                    reason: Error::DigestMismatch,
                },
                Err(_) => State::Failed {
                    image,
                    received: next,
                    reason: flash_failed(FlashOp::Read),
                },
            };
            if let State::Verified { .. } = self.state {
                self.log(Event::FirmwareStaged);
            }
        }
        Ok(next)
    }

    /// The first phase of a commit: the token that commits the verified image.
    pub fn prepare_commit(&mut self) -> Result<Token, Error> {
        match &self.state {
            State::Idle => Err(Error::NoUpdateInProgress),
            State::Receiving {
                image, received, ..
            } => Err(Error::ImageIncomplete {
                received: *received,
                size: image.size,
            }),
            State::Failed { reason, .. } => Err(reason.clone()),
            State::Verified { image } | State::Armed { image, .. } => {
                let image = *image;
                self.arms = self.arms.wrapping_add(1);
                let token = token_for(&image, self.running, self.arms);
                self.state = State::Armed { image, token };
                Ok(token)
            }
            State::Committed { token, .. } => Ok(*token),
        }
    }

    /// The second phase: with the token of the last arm, records the new
    /// image as the trial of the next start.
    pub fn commit(&mut self, presented: Token) -> Result<(), Error> {
        match &self.state {
            State::Idle => Err(Error::NoUpdateInProgress),
            State::Receiving {
                image, received, ..
            } => Err(Error::ImageIncomplete {
                received: *received,
                size: image.size,
            }),
            State::Failed { reason, .. } => Err(reason.clone()),
            State::Verified { .. } => Err(Error::BadToken),
            State::Armed { token, .. } | State::Committed { token, .. } if *token != presented => {
                Err(Error::BadToken)
            }
            State::Committed { .. } => Ok(()),
            State::Armed { image, token } => {
                let (image, token) = (*image, *token);
                let record = BootRecord {
                    active: self.running,
                    trial: Some(Trial {
                        slot: other(self.running),
                        started: false,
                        image,
                    }),
                };
                save_record(&mut self.boot_flash, &record).map_err(record_failed)?;
                self.record = record;
                self.state = State::Committed { image, token };
                self.log(Event::FirmwareCommitted);
                // Nothing left to resume. Should this fail, the stale record
                // names the slot now on trial, which a start resumes only
                // after an abort or a boot-back, and the image is then
                // checked whole again before any commit.
                let _ = save_record(&mut self.staging_flash, &StagingRecord(None));
                Ok(())
            }
        }
    }

    /// Discards the update; after a commit, keeps booting the running slot.
    pub fn abort(&mut self) -> Result<(), Error> {
        if let State::Committed { .. } = self.state {
            let record = BootRecord {
                active: self.running,
                trial: None,
            };
            save_record(&mut self.boot_flash, &record).map_err(record_failed)?;
            self.record = record;
        }
        if !matches!(self.state, State::Idle) {
            save_record(&mut self.staging_flash, &StagingRecord(None)).map_err(record_failed)?;
        }
        self.state = State::Idle;
        Ok(())
    }
}

impl<F: Flash> FirmwareService for FirmwareUpdate<F> {
    fn serve(&mut self, request: &Request, trailing: &[u8]) -> Result<Response, Error> {
        match request {
            Request::FirmwarePrepare { size, digest } => {
                self.prepare(*size, *digest).map(|()| Response::Done)
            }
            Request::FirmwareChunk { offset } => self
                .chunk(*offset, trailing)
                .map(|next_offset| Response::ChunkAccepted { next_offset }),
            Request::FirmwareStatus => Ok(Response::FirmwareStatus(self.status())),
            Request::FirmwarePrepareCommit => self
                .prepare_commit()
                .map(|token| Response::CommitPrepared { token }),
            Request::FirmwareCommit { token } => self.commit(*token).map(|()| Response::Done),
            Request::FirmwareAbort => self.abort().map(|()| Response::Done),
            _ => Err(Error::Unsupported),
        }
    }

    fn take_event(&mut self) -> Option<Event> {
        self.events.pop_front()
    }
}

/// Writes `bytes` at `offset` of `slot`, erasing the sectors it reaches
/// from `erased_to` on first, and reads them back.
fn write_checked<F: Flash>(
    slot: &mut F,
    offset: u32,
    bytes: &[u8],
    erased_to: &mut u32,
) -> Result<(), FlashOp> {
    let end = offset + bytes.len() as u32;
    while *erased_to < end {
        slot.erase(*erased_to, SECTOR_SIZE)
            .map_err(|_| FlashOp::Erase)?;
        *erased_to += SECTOR_SIZE;
    }
    slot.write(offset, bytes).map_err(|_| FlashOp::Program)?;
    let mut back = [0u8; MAX_CHUNK];
    let back = &mut back[..bytes.len()];
    slot.read(offset, back).map_err(|_| FlashOp::Read)?;
    if back != bytes {
        return Err(FlashOp::Verify);
    }
    Ok(())
}

/// The SHA-256 of the first `size` bytes of `slot`, as the flash holds them.
fn digest_of<F: Flash>(slot: &mut F, size: u32) -> Result<Digest, FlashError> {
    let mut hasher = Sha256::new();
    let mut buf = [0u8; 256];
    let mut at = 0;
    while at < size {
        let piece = &mut buf[..(size - at).min(256) as usize];
        slot.read(at, piece)?;
        hasher.update(&*piece);
        at += piece.len() as u32;
    }
    Ok(Digest(hasher.finalize().into()))
}

/// The token of arm number `arms` of `image` while running from `running`.
fn token_for(image: &ImageId, running: ImageSlot, arms: u32) -> Token {
    let mut hasher = Sha256::new();
    hasher.update(b"weft firmware commit");
    hasher.update(image.digest.0);
    hasher.update(image.size.to_le_bytes());
    hasher.update([slot_byte(running)]);
    hasher.update(arms.to_le_bytes());
    let hash = hasher.finalize();
    Token(u32::from_le_bytes([hash[0], hash[1], hash[2], hash[3]]))
}
