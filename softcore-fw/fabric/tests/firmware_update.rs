//! Firmware update into the slot not running: given a board running from
//! one image slot, an update writes only the other, resumes where the
//! switch says, is committed only whole and matching its SHA-256 (FIPS
//! 180-4, computed here by the `sha2` crate, not by the code under test),
//! commits once per token, a trial image that never checks in is booted
//! back from, each step of the way is an event for the log, and an upload
//! cut by a restart resumes from its last checkpoint but is still checked
//! whole.

use sha2::{Digest as _, Sha256};
use weft_fabric::boot_image::Handoff;
use weft_fabric::events::Event;
use weft_fabric::firmware_update::{
    boot, select_boot, BootChoice, BootKind, BootRecord, FirmwareService, FirmwareUpdate, ImageId,
    Staging, StagingRecord, Trial, BOOT_RECORD_LEN, CHECKPOINT_BYTES, STAGING_RECORD_LEN,
};
use weft_fabric::memory_flash::MemoryFlash;
use weft_fabric::persist::{crc32, load_record, save_record, Flash, FlashError};
use weft_proto::{
    Digest, Error, FlashOp, ImageSlot, Request, Response, Token, UpdateState, MAX_CHUNK,
};
use weft_regs::soc::spi_flash::SECTOR_SIZE;

/// Sectors in each image slot of the test board.
const SLOT_SECTORS: u32 = 16;

/// A flash region that fails the erase or write it is told to.
struct Faulty {
    flash: MemoryFlash<Vec<u8>>,
    fail_erase_at: Option<u32>,
    fail_write_at: Option<u32>,
}

impl Faulty {
    fn erased(size: u32) -> Self {
        Faulty {
            flash: MemoryFlash::new(vec![0xFF; size as usize], SECTOR_SIZE),
            fail_erase_at: None,
            fail_write_at: None,
        }
    }

    fn holding(bytes: Vec<u8>) -> Self {
        Faulty {
            flash: MemoryFlash::new(bytes, SECTOR_SIZE),
            fail_erase_at: None,
            fail_write_at: None,
        }
    }

    fn contents(&self) -> &[u8] {
        self.flash.contents()
    }
}

impl Flash for Faulty {
    fn size(&self) -> u32 {
        self.flash.size()
    }

    fn read(&mut self, offset: u32, buf: &mut [u8]) -> Result<(), FlashError> {
        self.flash.read(offset, buf)
    }

    fn erase(&mut self, offset: u32, len: u32) -> Result<(), FlashError> {
        if self.fail_erase_at.take_if(|at| *at == offset).is_some() {
            return Err(FlashError::Failed { offset });
        }
        self.flash.erase(offset, len)
    }

    fn write(&mut self, offset: u32, data: &[u8]) -> Result<(), FlashError> {
        if self.fail_write_at.take_if(|at| *at == offset).is_some() {
            // A torn write: half the bytes programmed before the failure.
            let half = data.len() / 2;
            self.flash.write(offset, &data[..half])?;
            return Err(FlashError::Failed { offset });
        }
        self.flash.write(offset, data)
    }
}

/// The running image's bytes in slot A, so a test sees any write to it.
const RUNNING_PATTERN: u8 = 0x5A;

/// A board running from slot A, whose slot A holds the running image.
fn board() -> FirmwareUpdate<Faulty> {
    let slot = (SLOT_SECTORS * SECTOR_SIZE) as usize;
    let images = [
        Faulty::holding(vec![RUNNING_PATTERN; slot]),
        Faulty::erased(slot as u32),
    ];
    FirmwareUpdate::new(
        images,
        Faulty::erased(2 * SECTOR_SIZE),
        Faulty::erased(2 * SECTOR_SIZE),
        ImageSlot::A,
    )
    .expect("an erased boot record reads")
}

/// An image of `len` bytes that differs at every offset a chunk could
/// start at.
fn image(len: usize) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u32).wrapping_mul(2_654_435_761).to_le_bytes()[3])
        .collect()
}

fn digest(bytes: &[u8]) -> Digest {
    Digest(Sha256::digest(bytes).into())
}

fn prepare(update: &mut FirmwareUpdate<Faulty>, bytes: &[u8]) -> Result<(), Error> {
    update.prepare(bytes.len() as u32, digest(bytes))
}

/// Sends chunks of `bytes` from `from` up to `to`, each accepted.
fn send(update: &mut FirmwareUpdate<Faulty>, bytes: &[u8], from: usize, to: usize) {
    let mut at = from;
    while at < to {
        let end = (at + MAX_CHUNK).min(to);
        let next = update
            .chunk(at as u32, &bytes[at..end])
            .unwrap_or_else(|e| panic!("the chunk at {at} is accepted: {e:?}"));
        assert_eq!(next as usize, end);
        at = end;
    }
}

/// A board with `bytes` received and verified in slot B.
fn verified(bytes: &[u8]) -> FirmwareUpdate<Faulty> {
    let mut update = board();
    prepare(&mut update, bytes).expect("prepared");
    send(&mut update, bytes, 0, bytes.len());
    assert_eq!(update.status().state, UpdateState::Verified);
    update
}

fn running_slot_untouched(update: &FirmwareUpdate<Faulty>) {
    assert!(
        update
            .image_flash(ImageSlot::A)
            .contents()
            .iter()
            .all(|&b| b == RUNNING_PATTERN),
        "the running slot was written"
    );
}

#[test]
fn an_image_goes_to_the_slot_not_running_and_is_verified_whole() {
    let bytes = image(3 * SECTOR_SIZE as usize + 100);
    let update = verified(&bytes);
    let slot_b = update.image_flash(ImageSlot::B).contents();
    assert_eq!(&slot_b[..bytes.len()], &bytes[..]);
    running_slot_untouched(&update);
    let status = update.status();
    assert_eq!(
        (status.size, status.received),
        (bytes.len() as u32, bytes.len() as u32)
    );
    // Verified is not committed: the next start still runs slot A.
    assert_eq!(
        (status.running, status.next_boot),
        (ImageSlot::A, ImageSlot::A)
    );
    // Four sectors reached, four erased; the rest of the slot was not.
    assert_eq!(update.image_flash(ImageSlot::B).flash.erases(), 4);
}

#[test]
fn a_prepare_of_the_same_image_resumes_where_the_transfer_stands() {
    let bytes = image(2 * SECTOR_SIZE as usize + 7);
    let mut update = board();
    prepare(&mut update, &bytes).expect("prepared");
    send(&mut update, &bytes, 0, 5 * MAX_CHUNK);
    // The client restarted: the same prepare, then chunks from 0.
    prepare(&mut update, &bytes).expect("the same image resumes");
    assert_eq!(update.status().state, UpdateState::Receiving);
    assert_eq!(
        update.chunk(0, &bytes[..MAX_CHUNK]),
        Err(Error::BadChunk {
            resume_at: 5 * MAX_CHUNK as u32
        })
    );
    send(&mut update, &bytes, 5 * MAX_CHUNK, bytes.len());
    assert_eq!(update.status().state, UpdateState::Verified);
    // Nothing written twice: each sector erased once.
    assert_eq!(update.image_flash(ImageSlot::B).flash.erases(), 3);
}

#[test]
fn a_refused_chunk_names_the_offset_to_resume_from() {
    let bytes = image(3 * MAX_CHUNK);
    let mut update = board();
    assert_eq!(
        update.chunk(0, &bytes[..10]),
        Err(Error::NoUpdateInProgress)
    );
    prepare(&mut update, &bytes).expect("prepared");
    send(&mut update, &bytes, 0, MAX_CHUNK);
    let resume = Err(Error::BadChunk {
        resume_at: MAX_CHUNK as u32,
    });
    let at = MAX_CHUNK as u32;
    // Ahead, behind, empty, longer than a chunk, past the image's end.
    assert_eq!(update.chunk(at + 4, &bytes[..4]), resume);
    assert_eq!(update.chunk(0, &bytes[..4]), resume);
    assert_eq!(update.chunk(at, &[]), resume);
    assert_eq!(update.chunk(at, &vec![0; MAX_CHUNK + 1]), resume);
    send(&mut update, &bytes, MAX_CHUNK, 2 * MAX_CHUNK);
    assert_eq!(update.chunk(2 * at, &[0; MAX_CHUNK]), Ok(3 * at));
    // The image is complete, and the last chunk was not its bytes.
    assert_eq!(
        update.status().state,
        UpdateState::Failed {
            reason: Error::DigestMismatch
        }
    );
}

#[test]
fn another_image_waits_for_an_abort_and_a_large_one_is_refused() {
    let bytes = image(100);
    let mut update = board();
    let max = SLOT_SECTORS * SECTOR_SIZE;
    assert_eq!(
        update.prepare(max + 1, digest(&bytes)),
        Err(Error::FirmwareTooLarge { max })
    );
    prepare(&mut update, &bytes).expect("prepared");
    assert_eq!(
        prepare(&mut update, &image(101)),
        Err(Error::UpdateInProgress)
    );
    update.abort().expect("aborted");
    prepare(&mut update, &image(101)).expect("prepared after the abort");
}

#[test]
fn an_image_whose_digest_differs_is_never_committed() {
    let bytes = image(SECTOR_SIZE as usize);
    let mut update = board();
    update
        .prepare(bytes.len() as u32, digest(b"another image"))
        .expect("prepared");
    send(&mut update, &bytes, 0, bytes.len());
    let failed = UpdateState::Failed {
        reason: Error::DigestMismatch,
    };
    assert_eq!(update.status().state, failed);
    assert_eq!(update.prepare_commit(), Err(Error::DigestMismatch));
    assert_eq!(update.commit(Token(0)), Err(Error::DigestMismatch));
    assert_eq!(update.boot_flash().flash.writes(), 0);
    // A new prepare starts again from 0.
    prepare(&mut update, &bytes).expect("prepared again");
    assert_eq!(update.status().received, 0);
    send(&mut update, &bytes, 0, bytes.len());
    assert_eq!(update.status().state, UpdateState::Verified);
}

#[test]
fn an_abort_discards_the_transfer_and_leaves_the_boot_record() {
    let bytes = image(2 * MAX_CHUNK);
    let mut update = board();
    prepare(&mut update, &bytes).expect("prepared");
    send(&mut update, &bytes, 0, MAX_CHUNK);
    update.abort().expect("aborted");
    assert_eq!(update.status().state, UpdateState::Idle);
    assert_eq!(
        update.chunk(MAX_CHUNK as u32, &bytes[MAX_CHUNK..]),
        Err(Error::NoUpdateInProgress)
    );
    assert_eq!(update.prepare_commit(), Err(Error::NoUpdateInProgress));
    assert_eq!(update.boot_flash().flash.writes(), 0);
    running_slot_untouched(&update);
}

#[test]
fn a_commit_needs_the_last_token_and_a_repeat_does_nothing_twice() {
    let bytes = image(SECTOR_SIZE as usize + 1);
    let mut update = board();
    prepare(&mut update, &bytes).expect("prepared");
    send(&mut update, &bytes, 0, MAX_CHUNK);
    assert_eq!(
        update.prepare_commit(),
        Err(Error::ImageIncomplete {
            received: MAX_CHUNK as u32,
            size: bytes.len() as u32
        })
    );
    send(&mut update, &bytes, MAX_CHUNK, bytes.len());
    assert_eq!(update.commit(Token(7)), Err(Error::BadToken));
    let stale = update.prepare_commit().expect("armed");
    let token = update.prepare_commit().expect("armed again");
    assert_ne!(stale, token);
    assert_eq!(update.status().state, UpdateState::CommitArmed);
    assert_eq!(update.commit(stale), Err(Error::BadToken));
    update.commit(token).expect("committed");
    let trial = BootRecord {
        active: ImageSlot::A,
        trial: Some(Trial {
            slot: ImageSlot::B,
            started: false,
            image: ImageId {
                size: bytes.len() as u32,
                digest: digest(&bytes),
            },
        }),
    };
    assert_eq!(*update.record(), trial);
    assert_eq!(update.status().next_boot, ImageSlot::B);
    let writes = update.boot_flash().flash.writes();
    // The trigger retried as a new request, and a whole commit again.
    update.commit(token).expect("the same token again");
    assert_eq!(update.prepare_commit(), Ok(token));
    update.commit(token).expect("and again");
    assert_eq!(update.commit(stale), Err(Error::BadToken));
    assert_eq!(update.boot_flash().flash.writes(), writes);
    // A new update would overwrite the committed slot: abort first.
    assert_eq!(prepare(&mut update, &bytes), Err(Error::UpdateInProgress));
    running_slot_untouched(&update);
}

#[test]
fn an_abort_after_the_commit_keeps_booting_the_running_slot() {
    let bytes = image(100);
    let mut update = verified(&bytes);
    let token = update.prepare_commit().expect("armed");
    update.commit(token).expect("committed");
    update.abort().expect("aborted");
    assert_eq!(*update.record(), BootRecord::default());
    let (_, mut boot_flash, _) = update.into_flash();
    let start = boot(&mut boot_flash).expect("the record reads");
    assert_eq!((start.slot, start.kind), (ImageSlot::A, BootKind::Active));
}

#[test]
fn boot_selection_tries_a_committed_image_once_then_boots_back() {
    let image = ImageId {
        size: 4,
        digest: digest(b"four"),
    };
    let good = BootRecord {
        active: ImageSlot::B,
        trial: None,
    };
    let committed = BootRecord {
        active: ImageSlot::B,
        trial: Some(Trial {
            slot: ImageSlot::A,
            started: false,
            image,
        }),
    };
    let started = BootRecord {
        active: ImageSlot::B,
        trial: Some(Trial {
            slot: ImageSlot::A,
            started: true,
            image,
        }),
    };
    let choice = |r: &BootRecord| {
        let c = select_boot(r);
        (c.slot, c.kind, c.record)
    };
    assert_eq!(choice(&good), (ImageSlot::B, BootKind::Active, good));
    assert_eq!(choice(&committed), (ImageSlot::A, BootKind::Trial, started));
    // Started before and found again: it never checked in.
    assert_eq!(choice(&started), (ImageSlot::B, BootKind::Rollback, good));
}

/// Commits `bytes` on a board running from slot A; the flash after it.
fn committed(bytes: &[u8]) -> ([Faulty; 2], Faulty, Faulty) {
    let mut update = verified(bytes);
    let token = update.prepare_commit().expect("armed");
    update.commit(token).expect("committed");
    update.into_flash()
}

#[test]
fn a_trial_that_never_checks_in_is_booted_back_from() {
    let (_, mut boot_flash, _) = committed(&image(100));
    let first = boot(&mut boot_flash).expect("reads");
    assert_eq!((first.slot, first.kind), (ImageSlot::B, BootKind::Trial));
    // The trial hung (the watchdog reset the core) before checking in.
    let second = boot(&mut boot_flash).expect("reads");
    assert_eq!(
        (second.slot, second.kind),
        (ImageSlot::A, BootKind::Rollback)
    );
    let third = boot(&mut boot_flash).expect("reads");
    assert_eq!((third.slot, third.kind), (ImageSlot::A, BootKind::Active));
}

#[test]
fn a_trial_that_checks_in_becomes_the_good_image() {
    let bytes = image(100);
    let (images, mut boot_flash, staging) = committed(&bytes);
    let start = boot(&mut boot_flash).expect("reads");
    let mut update = FirmwareUpdate::new(images, boot_flash, staging, start.slot).expect("reads");
    let status = update.status();
    assert_eq!(status.state, UpdateState::Trial);
    // Not checked in, a boot would go back to A: A must not be overwritten.
    assert_eq!(
        (status.running, status.next_boot),
        (ImageSlot::B, ImageSlot::A)
    );
    assert_eq!(prepare(&mut update, &bytes), Err(Error::UpdateInProgress));
    assert_eq!(update.check_in(), Ok(true));
    assert_eq!(update.check_in(), Ok(false));
    assert_eq!(update.status().state, UpdateState::Idle);
    assert_eq!(update.status().next_boot, ImageSlot::B);
    // The next update goes to slot A.
    let next = image(SECTOR_SIZE as usize);
    prepare(&mut update, &next).expect("prepared");
    send(&mut update, &next, 0, next.len());
    assert_eq!(
        &update.image_flash(ImageSlot::A).contents()[..next.len()],
        &next[..]
    );
    assert_eq!(
        &update.image_flash(ImageSlot::B).contents()[..bytes.len()],
        &bytes[..]
    );
    let (_, mut boot_flash, _) = update.into_flash();
    let start = boot(&mut boot_flash).expect("reads");
    assert_eq!((start.slot, start.kind), (ImageSlot::B, BootKind::Active));
}

#[test]
fn a_flash_failure_steps_back_to_the_sector_start() {
    let bytes = image(2 * SECTOR_SIZE as usize);
    let (images, boot_flash, staging) = board().into_flash();
    let [a, mut b] = images;
    b.fail_write_at = Some(SECTOR_SIZE + MAX_CHUNK as u32);
    let mut update = FirmwareUpdate::new([a, b], boot_flash, staging, ImageSlot::A).expect("reads");
    prepare(&mut update, &bytes).expect("prepared");
    send(&mut update, &bytes, 0, SECTOR_SIZE as usize + MAX_CHUNK);
    let at = SECTOR_SIZE as usize + MAX_CHUNK;
    assert_eq!(
        update.chunk(at as u32, &bytes[at..at + MAX_CHUNK]),
        Err(Error::FlashFailed {
            op: FlashOp::Program
        })
    );
    assert_eq!(update.status().received, SECTOR_SIZE);
    assert_eq!(
        update.chunk(at as u32, &bytes[at..at + MAX_CHUNK]),
        Err(Error::BadChunk {
            resume_at: SECTOR_SIZE
        })
    );
    send(&mut update, &bytes, SECTOR_SIZE as usize, bytes.len());
    assert_eq!(update.status().state, UpdateState::Verified);
}

#[test]
fn a_failed_erase_is_reported_and_retried() {
    let bytes = image(SECTOR_SIZE as usize + 10);
    let (images, boot_flash, staging) = board().into_flash();
    let [a, mut b] = images;
    b.fail_erase_at = Some(SECTOR_SIZE);
    let mut update = FirmwareUpdate::new([a, b], boot_flash, staging, ImageSlot::A).expect("reads");
    prepare(&mut update, &bytes).expect("prepared");
    let at = SECTOR_SIZE as usize;
    send(&mut update, &bytes, 0, at);
    assert_eq!(
        update.chunk(at as u32, &bytes[at..]),
        Err(Error::FlashFailed { op: FlashOp::Erase })
    );
    // The sector before is whole: the transfer resumes where it stood.
    assert_eq!(update.status().received, SECTOR_SIZE);
    send(&mut update, &bytes, at, bytes.len());
    assert_eq!(update.status().state, UpdateState::Verified);
}

#[test]
fn the_update_requests_are_served() {
    let bytes = image(MAX_CHUNK + 3);
    let mut update = board();
    let prepare = Request::FirmwarePrepare {
        size: bytes.len() as u32,
        digest: digest(&bytes),
    };
    assert_eq!(update.serve(&prepare, &[]), Ok(Response::Done));
    let chunk = |offset: usize| Request::FirmwareChunk {
        offset: offset as u32,
    };
    assert_eq!(
        update.serve(&chunk(0), &bytes[..MAX_CHUNK]),
        Ok(Response::ChunkAccepted {
            next_offset: MAX_CHUNK as u32
        })
    );
    assert_eq!(
        update.serve(&chunk(MAX_CHUNK), &bytes[MAX_CHUNK..]),
        Ok(Response::ChunkAccepted {
            next_offset: bytes.len() as u32
        })
    );
    let Ok(Response::FirmwareStatus(status)) = update.serve(&Request::FirmwareStatus, &[]) else {
        panic!("a status");
    };
    assert_eq!(status.state, UpdateState::Verified);
    let Ok(Response::CommitPrepared { token }) = update.serve(&Request::FirmwarePrepareCommit, &[])
    else {
        panic!("a token");
    };
    assert_eq!(
        update.serve(&Request::FirmwareCommit { token }, &[]),
        Ok(Response::Done)
    );
    assert_eq!(
        update.serve(&Request::FirmwareAbort, &[]),
        Ok(Response::Done)
    );
    assert_eq!(update.serve(&Request::Ping, &[]), Err(Error::Unsupported));
}

/// The boot record's bytes as the module docs lay them out.
#[test]
fn the_boot_record_has_the_documented_layout() {
    let (_, boot_flash, _) = committed(&image(100));
    let bytes = &boot_flash.contents()[..BOOT_RECORD_LEN];
    assert_eq!(&bytes[..4], b"WFTF");
    assert_eq!(&bytes[4..6], &1u16.to_le_bytes());
    assert_eq!(&bytes[6..8], &40u16.to_le_bytes());
    assert_eq!(&bytes[8..12], &0u32.to_le_bytes());
    // Good slot A, a committed trial in slot B, its size and digest.
    assert_eq!(&bytes[12..16], &[0, 1, 1, 0]);
    assert_eq!(&bytes[16..20], &100u32.to_le_bytes());
    assert_eq!(&bytes[20..52], &digest(&image(100)).0);
    assert_eq!(&bytes[52..56], &crc32(&bytes[..52]).to_le_bytes());
}

/// The events `update` holds, oldest first, taken.
fn events(update: &mut FirmwareUpdate<Faulty>) -> Vec<Event> {
    std::iter::from_fn(|| update.take_event()).collect()
}

/// The handoff of a start that runs the slot `choice` picked.
fn handoff_of(choice: &BootChoice) -> Handoff {
    Handoff {
        chosen: choice.slot,
        kind: choice.kind,
        running: Some(choice.slot),
    }
}

#[test]
fn an_update_is_staged_committed_started_on_trial_and_checked_in_as_events() {
    let bytes = image(SECTOR_SIZE as usize + 10);
    let mut update = board();
    prepare(&mut update, &bytes).expect("prepared");
    send(&mut update, &bytes, 0, bytes.len() - 1);
    assert_eq!(events(&mut update), [], "not staged before the last byte");
    send(&mut update, &bytes, bytes.len() - 1, bytes.len());
    assert_eq!(events(&mut update), [Event::FirmwareStaged]);
    let token = update.prepare_commit().expect("armed");
    update.commit(token).expect("committed");
    update.commit(token).expect("a repeat");
    assert_eq!(
        events(&mut update),
        [Event::FirmwareCommitted],
        "a repeated commit is one"
    );

    let (images, mut boot_flash, staging) = update.into_flash();
    let start = boot(&mut boot_flash).expect("reads");
    let mut update = FirmwareUpdate::new(images, boot_flash, staging, start.slot).expect("reads");
    update.note_start(&handoff_of(&start));
    assert_eq!(update.check_in(), Ok(true));
    assert_eq!(update.check_in(), Ok(false));
    assert_eq!(
        events(&mut update),
        [
            Event::FirmwareTrialStarted { slot: ImageSlot::B },
            Event::FirmwareCheckedIn { slot: ImageSlot::B },
        ]
    );

    // A start of the good image logs nothing.
    let (images, mut boot_flash, staging) = update.into_flash();
    let start = boot(&mut boot_flash).expect("reads");
    assert_eq!(start.kind, BootKind::Active);
    let mut update = FirmwareUpdate::new(images, boot_flash, staging, start.slot).expect("reads");
    update.note_start(&handoff_of(&start));
    assert_eq!(update.check_in(), Ok(false));
    assert_eq!(events(&mut update), []);
}

#[test]
fn a_boot_back_is_an_event_and_a_trial_the_loader_passed_over_is_not_started() {
    let (images, mut boot_flash, staging) = committed(&image(100));
    let trial = boot(&mut boot_flash).expect("reads");
    // The loader found the trial's slot bad and started slot A instead.
    let mut update = FirmwareUpdate::new(images, boot_flash, staging, ImageSlot::A).expect("reads");
    update.note_start(&Handoff {
        running: Some(ImageSlot::A),
        ..handoff_of(&trial)
    });
    assert_eq!(update.check_in(), Ok(false));
    assert_eq!(events(&mut update), []);

    let (images, mut boot_flash, staging) = update.into_flash();
    let back = boot(&mut boot_flash).expect("reads");
    assert_eq!(back.kind, BootKind::Rollback);
    let mut update = FirmwareUpdate::new(images, boot_flash, staging, back.slot).expect("reads");
    update.note_start(&handoff_of(&back));
    assert_eq!(
        events(&mut update),
        [Event::FirmwareBootedBack { slot: ImageSlot::A }]
    );
}

/// The board after a restart that runs `running`: a new update on the
/// same flash.
fn restarted(update: FirmwareUpdate<Faulty>, running: ImageSlot) -> FirmwareUpdate<Faulty> {
    let (images, boot_flash, staging) = update.into_flash();
    FirmwareUpdate::new(images, boot_flash, staging, running).expect("reads")
}

#[test]
fn an_upload_resumes_from_its_last_checkpoint_after_a_restart() {
    let checkpoint = CHECKPOINT_BYTES as usize;
    let bytes = image(checkpoint + 3 * SECTOR_SIZE as usize + 100);
    let mut update = board();
    prepare(&mut update, &bytes).expect("prepared");
    // Past the checkpoint, into the sector after it.
    send(&mut update, &bytes, 0, checkpoint + 1_500);
    let mut update = restarted(update, ImageSlot::A);
    let status = update.status();
    assert_eq!(
        (status.state, status.size, status.received),
        (UpdateState::Receiving, bytes.len() as u32, CHECKPOINT_BYTES),
        "the restarted switch stands at the checkpoint"
    );
    assert_eq!(
        update.chunk(0, &bytes[..MAX_CHUNK]),
        Err(Error::BadChunk {
            resume_at: CHECKPOINT_BYTES
        }),
        "a chunk elsewhere names the checkpoint"
    );
    // The client's prepare of the same image resumes; the rest completes it.
    prepare(&mut update, &bytes).expect("resumed");
    send(&mut update, &bytes, checkpoint, bytes.len());
    assert_eq!(update.status().state, UpdateState::Verified);
    assert_eq!(
        &update.image_flash(ImageSlot::B).contents()[..bytes.len()],
        &bytes[..]
    );
    running_slot_untouched(&update);
    let token = update.prepare_commit().expect("armed");
    update.commit(token).expect("committed");
    assert_eq!(update.status().next_boot, ImageSlot::B);
    // Nothing to resume after the commit, on trial or not.
    let (images, mut boot_flash, staging) = update.into_flash();
    assert_eq!(
        load_record::<StagingRecord, _>(&mut Faulty::holding(staging.contents().to_vec())),
        Ok(Some(StagingRecord(None)))
    );
    let start = boot(&mut boot_flash).expect("reads");
    let update = FirmwareUpdate::new(images, boot_flash, staging, start.slot).expect("reads");
    assert_eq!(update.status().state, UpdateState::Trial);
}

#[test]
fn a_resumed_upload_is_still_checked_whole_before_a_commit() {
    let checkpoint = CHECKPOINT_BYTES as usize;
    let bytes = image(checkpoint + 200);
    let mut update = board();
    prepare(&mut update, &bytes).expect("prepared");
    send(&mut update, &bytes, 0, checkpoint + 100);
    let (images, boot_flash, staging) = update.into_flash();
    // While the switch was down, a bit below the checkpoint flipped.
    let [a, b] = images;
    let mut slot = b.contents().to_vec();
    slot[10] ^= 0x10;
    let mut update = FirmwareUpdate::new(
        [a, Faulty::holding(slot)],
        boot_flash,
        staging,
        ImageSlot::A,
    )
    .expect("reads");
    assert_eq!(update.status().received, CHECKPOINT_BYTES);
    send(&mut update, &bytes, checkpoint, bytes.len());
    assert_eq!(
        update.status().state,
        UpdateState::Failed {
            reason: Error::DigestMismatch
        }
    );
    assert_eq!(update.prepare_commit(), Err(Error::DigestMismatch));
}

#[test]
fn an_abort_or_another_running_slot_leaves_nothing_to_resume() {
    let checkpoint = CHECKPOINT_BYTES as usize;
    let bytes = image(checkpoint + 200);
    let mut update = board();
    prepare(&mut update, &bytes).expect("prepared");
    send(&mut update, &bytes, 0, checkpoint + 100);
    // Another image waits for an abort, after a restart as before it.
    let mut update = restarted(update, ImageSlot::A);
    let other_image = image(300);
    assert_eq!(
        prepare(&mut update, &other_image),
        Err(Error::UpdateInProgress)
    );
    // Started from slot B (the record's slot), nothing is resumed: the
    // running image is never written.
    let update = restarted(update, ImageSlot::B);
    assert_eq!(update.status().state, UpdateState::Idle);
    let mut update = restarted(update, ImageSlot::A);
    assert_eq!(update.status().state, UpdateState::Receiving);
    update.abort().expect("aborted");
    let update = restarted(update, ImageSlot::A);
    assert_eq!(update.status().state, UpdateState::Idle);
}

#[test]
fn no_upload_resumes_while_the_running_image_is_on_trial() {
    // A committed trial in B that started; a stale record names B's
    // fallback, slot A, as an upload's target.
    let (images, mut boot_flash, mut staging) = committed(&image(100));
    let start = boot(&mut boot_flash).expect("reads");
    assert_eq!(start.kind, BootKind::Trial);
    let stale = StagingRecord(Some(Staging {
        slot: ImageSlot::A,
        image: ImageId {
            size: 2 * CHECKPOINT_BYTES,
            digest: digest(&[1, 2, 3]),
        },
        written: CHECKPOINT_BYTES,
    }));
    save_record(&mut staging, &stale).expect("stored");
    let update = FirmwareUpdate::new(images, boot_flash, staging, start.slot).expect("reads");
    assert_eq!(update.status().state, UpdateState::Trial);
}

#[test]
fn the_staging_record_has_the_documented_layout() {
    let bytes = image(CHECKPOINT_BYTES as usize + 10);
    let mut update = board();
    prepare(&mut update, &bytes).expect("prepared");
    send(&mut update, &bytes, 0, CHECKPOINT_BYTES as usize + 5);
    // The prepare's record went to the first slot of the region, the
    // checkpoint's to the second.
    let region = update.staging_flash().contents();
    let record = &region[SECTOR_SIZE as usize..][..STAGING_RECORD_LEN];
    assert_eq!(&record[..4], b"WFTS");
    assert_eq!(&record[4..6], &1u16.to_le_bytes());
    assert_eq!(&record[6..8], &44u16.to_le_bytes());
    assert_eq!(&record[8..12], &1u32.to_le_bytes(), "the second record");
    // An upload to slot B, its size, digest and checkpoint.
    assert_eq!(&record[12..16], &[1, 1, 0, 0]);
    assert_eq!(&record[16..20], &(bytes.len() as u32).to_le_bytes());
    assert_eq!(&record[20..52], &digest(&bytes).0);
    assert_eq!(&record[52..56], &CHECKPOINT_BYTES.to_le_bytes());
    assert_eq!(&record[56..60], &crc32(&record[..56]).to_le_bytes());
}
