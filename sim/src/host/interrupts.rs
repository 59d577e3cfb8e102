//! The host's interrupt controller: MSI/MSI-X vectors handed out to
//! functions, and the messages that arrive for them.
//!
//! Modelled on x86's local APIC message format: a function writes one DW
//! to `0xFEEx_xxxx` (the destination APIC ID in bits 19:12) and the data's
//! low byte is the vector (Intel SDM Vol. 3 §11.11). Vectors 0x20..=0xFE
//! are free for devices, as on Linux x86.

use std::collections::BTreeMap;
use std::ops::Range;

/// The address range the root complex decodes as interrupt messages.
pub const MSI_WINDOW: Range<u64> = 0xfee0_0000..0xfef0_0000;
/// The address every vector is programmed with: destination APIC 0,
/// physical destination mode.
pub const MSI_ADDRESS: u64 = 0xfee0_0000;
/// The first vector handed to devices.
const FIRST_VECTOR: u8 = 0x20;
/// The last vector handed to devices (0xFF is the spurious vector).
const LAST_VECTOR: u8 = 0xfe;

/// One interrupt vector.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Vector(pub u8);

impl Vector {
    /// The MSI/MSI-X message (address, data) that raises this vector.
    pub const fn message(self) -> (u64, u32) {
        (MSI_ADDRESS, self.0 as u32)
    }
}

/// Why a vector could not be allocated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InterruptError {
    /// Every device vector is in use.
    Exhausted {
        /// How many vectors are allocated.
        allocated: usize,
    },
}

/// An interrupt message that arrived for no allocated vector.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stray {
    /// The address written.
    pub address: u64,
    /// The DW written.
    pub data: u32,
}

/// Vectors, who owns them, and how often each fired.
#[derive(Clone, Debug, Default)]
pub struct InterruptController {
    owners: BTreeMap<Vector, String>,
    pending: BTreeMap<Vector, u32>,
    delivered: u64,
    strays: Vec<Stray>,
}

impl InterruptController {
    /// A controller with no vectors allocated.
    pub fn new() -> Self {
        Self::default()
    }

    /// Allocates the lowest free vector for `owner` (a name for reports).
    pub fn allocate(&mut self, owner: &str) -> Result<Vector, InterruptError> {
        let free = (FIRST_VECTOR..=LAST_VECTOR)
            .map(Vector)
            .find(|vector| !self.owners.contains_key(vector));
        let vector = free.ok_or(InterruptError::Exhausted {
            allocated: self.owners.len(),
        })?;
        self.owners.insert(vector, owner.to_owned());
        Ok(vector)
    }

    /// Returns `vector` to the pool and drops what was pending on it.
    pub fn free(&mut self, vector: Vector) {
        self.owners.remove(&vector);
        self.pending.remove(&vector);
    }

    /// Who owns `vector`, if anyone.
    pub fn owner(&self, vector: Vector) -> Option<&str> {
        self.owners.get(&vector).map(String::as_str)
    }

    /// A Memory Write into [`MSI_WINDOW`] arrived.
    pub fn deliver(&mut self, address: u64, data: u32) {
        self.delivered += 1;
        let vector = Vector(data as u8);
        if self.owners.contains_key(&vector) && MSI_WINDOW.contains(&address) {
            *self.pending.entry(vector).or_default() += 1;
        } else {
            self.strays.push(Stray { address, data });
        }
    }

    /// How many times `vector` fired since the last call; clears it.
    pub fn take(&mut self, vector: Vector) -> u32 {
        self.pending.remove(&vector).unwrap_or(0)
    }

    /// Whether `vector` has fired and not been taken.
    pub fn is_pending(&self, vector: Vector) -> bool {
        self.pending.contains_key(&vector)
    }

    /// Every interrupt message received since the host started.
    pub fn delivered(&self) -> u64 {
        self.delivered
    }

    /// Messages that matched no allocated vector.
    pub fn strays(&self) -> &[Stray] {
        &self.strays
    }
}
