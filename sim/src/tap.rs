//! A Linux TAP interface: whole Ethernet frames between this process and
//! the kernel's network stack (Documentation/networking/tuntap.rst).
//!
//! Opening `/dev/net/tun` and attaching it to a TAP interface needs
//! `CAP_NET_ADMIN`. The attaching `TUNSETIFF` ioctl is the one `unsafe`
//! call of this crate; everything else is plain reads and writes of the
//! file, one frame each, without the packet-information prefix
//! (`IFF_NO_PI`). The interface lives while the file is open.

use std::ffi::c_char;
use std::fmt;
use std::fs::{File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::fd::AsRawFd;

/// The TUN/TAP clone device.
pub const CLONE_DEVICE: &str = "/dev/net/tun";

/// The longest frame read from the interface: a 1500-byte payload and its
/// Ethernet header (the interface's default MTU), with room for a VLAN tag.
pub const MAX_FRAME: usize = 1518;

/// Why a TAP interface could not be opened.
#[derive(Debug)]
pub enum TapError {
    /// The name does not fit `IFNAMSIZ` less its terminating zero, or is empty.
    BadName {
        /// The name asked for.
        name: String,
    },
    /// `/dev/net/tun` could not be opened.
    Open(io::Error),
    /// The kernel refused to attach the interface.
    Attach {
        /// The interface's name.
        name: String,
        /// Why.
        source: io::Error,
    },
}

impl fmt::Display for TapError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TapError::BadName { name } => write!(
                f,
                "{name:?} is not an interface name: 1 to {} bytes",
                libc::IFNAMSIZ - 1
            ),
            TapError::Open(source) => write!(
                f,
                "cannot open {CLONE_DEVICE}: {source} (a TAP interface needs root or \
                 CAP_NET_ADMIN, and the tun module)"
            ),
            TapError::Attach { name, source } => write!(
                f,
                "cannot attach TAP interface {name}: {source} (a TAP interface needs root \
                 or CAP_NET_ADMIN; is {name} in use by another process?)"
            ),
        }
    }
}

impl std::error::Error for TapError {}

/// An open TAP interface.
#[derive(Debug)]
pub struct Tap {
    file: File,
    name: String,
}

impl Tap {
    /// Creates (or attaches to) the TAP interface `name`.
    pub fn open(name: &str) -> Result<Tap, TapError> {
        let bytes = name.as_bytes();
        if bytes.is_empty() || bytes.len() >= libc::IFNAMSIZ || bytes.contains(&0) {
            return Err(TapError::BadName { name: name.into() });
        }
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .open(CLONE_DEVICE)
            .map_err(TapError::Open)?;
        let mut ifr_name = [0 as c_char; libc::IFNAMSIZ];
        for (to, &from) in ifr_name.iter_mut().zip(bytes) {
            *to = from as c_char;
        }
        let mut request = libc::ifreq {
            ifr_name,
            ifr_ifru: libc::__c_anonymous_ifr_ifru {
                ifru_flags: (libc::IFF_TAP | libc::IFF_NO_PI) as libc::c_short,
            },
        };
        attach(&file, &mut request).map_err(|source| TapError::Attach {
            name: name.into(),
            source,
        })?;
        Ok(Tap {
            file,
            name: name.into(),
        })
    }

    /// The interface's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Sends one frame to the kernel.
    pub fn send(&self, frame: &[u8]) -> io::Result<()> {
        (&self.file).write_all(frame)
    }

    /// A second handle that reads frames, for a reader thread.
    pub fn reader(&self) -> io::Result<TapReader> {
        Ok(TapReader {
            file: self.file.try_clone()?,
        })
    }
}

/// Reads the frames the kernel sends out of a TAP interface.
#[derive(Debug)]
pub struct TapReader {
    file: File,
}

impl TapReader {
    /// Waits for the next frame and returns it.
    pub fn next_frame(&mut self) -> io::Result<Vec<u8>> {
        let mut frame = vec![0; MAX_FRAME];
        let len = self.file.read(&mut frame)?;
        frame.truncate(len);
        Ok(frame)
    }
}

/// `ioctl(TUNSETIFF)`: attaches the open clone device to the interface
/// that `request` names, with its flags.
#[allow(unsafe_code)]
fn attach(file: &File, request: &mut libc::ifreq) -> io::Result<()> {
    // SAFETY: TUNSETIFF reads and writes one `struct ifreq`, and `request`
    // is a valid, exclusively borrowed `ifreq` for the whole call; the
    // descriptor belongs to `file`, which outlives the call.
    let result = unsafe { libc::ioctl(file.as_raw_fd(), libc::TUNSETIFF, request as *mut _) };
    if result < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}
