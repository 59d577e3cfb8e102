//! A firmware update from an image file: prepare, chunks, status, commit.
//!
//! The switch writes the image into the partition it is not running from,
//! so nothing here can break the running firmware:
//!
//! 1. `FirmwarePrepare` announces the size and SHA-256 (FIPS 180-4) of the
//!    image;
//! 2. `FirmwareChunk` requests carry up to [`MAX_CHUNK`] bytes each, at the
//!    offset the switch expects; a refused chunk (`BadChunk`) names the offset
//!    to resume from, and the transfer continues there;
//! 3. `FirmwareStatus` confirms that every byte arrived and the digest
//!    matched;
//! 4. `FirmwarePrepareCommit` returns a token and `FirmwareCommit` presents
//!    it, so that a retried or stale commit cannot boot an image twice. The
//!    switch boots the new image on trial and falls back to the old one if
//!    it does not check in.

use std::thread;
use std::time::{Duration, Instant};

use serde::Serialize;
use sha2::{Digest as _, Sha256};
use weft_fabric::boot_image::IMAGE_MAGIC;
use weft_proto::{Digest, Error, FirmwareStatus, Request, Response, UpdateState, MAX_CHUNK};

use crate::client::{unexpected, Client};
use crate::error::ClientError;

/// How many chunks in a row may be refused or fail to advance the transfer
/// before it is called stalled.
pub const MAX_STALLED_CHUNKS: u32 = 8;

/// A firmware image read into memory, with its SHA-256.
#[derive(Clone, Debug)]
pub struct Image {
    bytes: Vec<u8>,
    size: u32,
    digest: Digest,
}

impl Image {
    /// The image made of `bytes`; it must hold 1 byte to 4 GiB − 1.
    pub fn new(bytes: Vec<u8>) -> Result<Image, ClientError> {
        let size = u32::try_from(bytes.len()).ok().filter(|&s| s > 0).ok_or(
            ClientError::FirmwareImageSize {
                size: bytes.len() as u64,
            },
        )?;
        let digest = Digest(Sha256::digest(&bytes).into());
        Ok(Image {
            bytes,
            size,
            digest,
        })
    }

    /// Its size in bytes.
    pub fn size(&self) -> u32 {
        self.size
    }

    /// Its SHA-256.
    pub fn digest(&self) -> Digest {
        self.digest
    }

    /// The chunk that starts at `offset`: up to [`MAX_CHUNK`] bytes.
    fn chunk(&self, offset: u32) -> &[u8] {
        let start = offset as usize;
        let end = (start + MAX_CHUNK).min(self.bytes.len());
        self.bytes.get(start..end).unwrap_or(&[])
    }
}

/// Checks that `bytes` start as a firmware image for a flash slot does
/// (`weft_fabric::boot_image`, magic "WFTI"), so that a file the boot
/// loader would never start (the firmware's ELF, say) is refused before
/// anything is sent. The switch checks the whole image; this only catches
/// the wrong file.
pub fn check_format(bytes: &[u8]) -> Result<(), ClientError> {
    let start = &bytes[..bytes.len().min(4)];
    if start == IMAGE_MAGIC.to_le_bytes() {
        Ok(())
    } else {
        Err(ClientError::NotFirmwareImage {
            start: start.to_vec(),
        })
    }
}

/// The digest as 64 lowercase hexadecimal digits.
pub fn digest_hex(digest: &Digest) -> String {
    digest.0.iter().map(|b| format!("{b:02x}")).collect()
}

/// What an update does besides sending the image.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct UpdateOptions {
    /// Continue a transfer that was interrupted, from the offset the switch
    /// reports, instead of preparing a new update.
    pub resume: bool,
    /// Stop once the image is verified, without committing it.
    pub no_commit: bool,
}

/// A step of the update, for a progress display.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UpdateProgress {
    /// The switch took the bytes before `offset`.
    Sent {
        /// Bytes accepted so far.
        offset: u32,
        /// The image's size.
        size: u32,
    },
    /// The switch refused a chunk and asked to resume from `at`.
    Resumed {
        /// Where the transfer continues.
        at: u32,
    },
    /// Every byte was sent; the switch checks the image.
    Verifying,
    /// The image is being committed.
    Committing,
}

/// What an update did.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct UpdateReport {
    /// The image's size.
    pub size: u32,
    /// The image's SHA-256, in hex.
    pub sha256: String,
    /// How many chunks were sent (refused ones included).
    pub chunks: u32,
    /// How many times the switch asked to resume elsewhere.
    pub resumes: u32,
    /// The switch's firmware status once the image was verified.
    pub status: FirmwareStatus,
    /// Whether the image was committed.
    pub committed: bool,
}

/// Sends `image` to the switch and, unless told not to, commits it (see the
/// module docs).
pub fn update(
    client: &mut Client,
    image: &Image,
    options: UpdateOptions,
    progress: &mut dyn FnMut(UpdateProgress),
) -> Result<UpdateReport, ClientError> {
    let mut offset = if options.resume {
        resume_point(client, image)?
    } else {
        let request = Request::FirmwarePrepare {
            size: image.size(),
            digest: image.digest(),
        };
        match client.request_to_completion(&request)? {
            Response::Done | Response::Operation(_) => 0,
            other => return Err(unexpected(&request, &other)),
        }
    };
    progress(UpdateProgress::Sent {
        offset,
        size: image.size(),
    });
    let (chunks, resumes) = send_chunks(client, image, &mut offset, progress)?;
    progress(UpdateProgress::Verifying);
    let status = await_verified(client)?;
    let mut committed = false;
    if !options.no_commit {
        progress(UpdateProgress::Committing);
        commit(client)?;
        committed = true;
    }
    Ok(UpdateReport {
        size: image.size(),
        sha256: digest_hex(&image.digest()),
        chunks,
        resumes,
        status,
        committed,
    })
}

/// Reads the firmware status.
pub fn status(client: &mut Client) -> Result<FirmwareStatus, ClientError> {
    let request = Request::FirmwareStatus;
    match client.request(&request)? {
        Response::FirmwareStatus(status) => Ok(status),
        other => Err(unexpected(&request, &other)),
    }
}

/// Arms and triggers the commit of a verified image.
pub fn commit(client: &mut Client) -> Result<Response, ClientError> {
    let arm = Request::FirmwarePrepareCommit;
    let token = match client.request(&arm)? {
        Response::CommitPrepared { token } => token,
        other => return Err(unexpected(&arm, &other)),
    };
    client.request_to_completion(&Request::FirmwareCommit { token })
}

/// Where an interrupted transfer of this image continues.
fn resume_point(client: &mut Client, image: &Image) -> Result<u32, ClientError> {
    let status = status(client)?;
    match status.state {
        UpdateState::Receiving if status.size == image.size() => Ok(status.received),
        UpdateState::Receiving => Err(ClientError::FirmwareResumeMismatch {
            pending: status.size,
            image: image.size(),
        }),
        _ => Err(ClientError::Refused(Error::NoUpdateInProgress)),
    }
}

/// Sends chunks from `offset` until the switch has taken the whole image.
/// Returns the number of chunks sent and of resumes.
fn send_chunks(
    client: &mut Client,
    image: &Image,
    offset: &mut u32,
    progress: &mut dyn FnMut(UpdateProgress),
) -> Result<(u32, u32), ClientError> {
    let size = image.size();
    let mut chunks = 0u32;
    let mut resumes = 0u32;
    let mut stalled = 0u32;
    let mut furthest = *offset;
    while *offset < size {
        let request = Request::FirmwareChunk { offset: *offset };
        chunks = chunks.saturating_add(1);
        let next = match client.exchange(&request, image.chunk(*offset)) {
            Ok(exchange) => match exchange.response {
                Response::ChunkAccepted { next_offset } if next_offset <= size => next_offset,
                other => return Err(unexpected(&request, &other)),
            },
            Err(ClientError::Refused(Error::BadChunk { resume_at })) if resume_at <= size => {
                resumes = resumes.saturating_add(1);
                progress(UpdateProgress::Resumed { at: resume_at });
                resume_at
            }
            Err(error) => return Err(error),
        };
        if next > furthest {
            furthest = next;
            stalled = 0;
        } else {
            stalled += 1;
            if stalled >= MAX_STALLED_CHUNKS {
                return Err(ClientError::FirmwareStalled {
                    offset: next,
                    refusals: stalled,
                });
            }
        }
        *offset = next;
        progress(UpdateProgress::Sent { offset: next, size });
    }
    Ok((chunks, resumes))
}

/// Reads the status until the switch has checked the image, which it may do
/// in the background after the last chunk.
fn await_verified(client: &mut Client) -> Result<FirmwareStatus, ClientError> {
    let deadline = Instant::now() + client.config().operation_deadline;
    let mut interval = client.config().poll_interval;
    loop {
        let status = status(client)?;
        match &status.state {
            UpdateState::Verified => return Ok(status),
            UpdateState::Failed { reason } => return Err(ClientError::Refused(reason.clone())),
            UpdateState::Receiving if Instant::now() + interval < deadline => {
                thread::sleep(interval);
                interval = (interval * 2).min(Duration::from_millis(500));
            }
            other => {
                return Err(ClientError::FirmwareNotVerified {
                    state: format!("{other:?}"),
                })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_digest_is_sha256_of_the_file() {
        // FIPS 180-4 example: SHA-256("abc").
        let image = Image::new(b"abc".to_vec()).expect("non-empty");
        assert_eq!(
            digest_hex(&image.digest()),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_eq!(image.size(), 3);
    }

    #[test]
    fn only_a_file_that_starts_as_a_slot_image_is_sent() {
        assert!(check_format(b"WFTI\x01\x00").is_ok());
        assert!(matches!(
            check_format(b"\x7fELF\x01\x01"),
            Err(ClientError::NotFirmwareImage { start }) if start == b"\x7fELF"
        ));
        assert!(matches!(
            check_format(b"WF"),
            Err(ClientError::NotFirmwareImage { start }) if start == b"WF"
        ));
    }

    #[test]
    fn an_empty_file_is_not_an_image() {
        assert!(matches!(
            Image::new(Vec::new()),
            Err(ClientError::FirmwareImageSize { size: 0 })
        ));
    }

    #[test]
    fn chunks_are_at_most_max_chunk_and_end_at_the_image_end() {
        let image = Image::new(vec![7; MAX_CHUNK + 10]).expect("non-empty");
        assert_eq!(image.chunk(0).len(), MAX_CHUNK);
        assert_eq!(image.chunk(MAX_CHUNK as u32).len(), 10);
        assert!(image.chunk(image.size()).is_empty());
    }
}
