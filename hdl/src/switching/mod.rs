//! The switching core: virtual output queues, the crossbar and its arbiter.
//!
//! Every ingress port stores each TLP in one slot of its own buffer
//! ([`SlotBuffer`]) and files the slot in one of its per-(egress, class)
//! queues ([`VirtualOutputQueues`]): posted, non-posted and completion
//! traffic for each egress wait apart, so a class blocked by ordering or by
//! the link partner's credits never blocks another class that may pass it
//! (PCIe Base 6.0 §2.4.1). A packet-mode iSLIP matcher ([`IslipMatcher`])
//! pairs free ingresses with free egresses each cycle; the [`Crossbar`]
//! holds an egress for its ingress until the TLP's last beat. Beats are
//! read out while the TLP is still arriving (cut-through). [`SwitchCore`]
//! puts them together.
//!
//! Sizes are those of `weft_regs::capacity`: [`SLOTS`] TLPs per ingress, each
//! at most [`SLOT_BEATS`] beats long.

mod buffer;
mod class_queues;
mod core;
mod crossbar;
pub mod figures;
pub(crate) mod gather;
mod islip;
mod queues;
pub mod traffic;

pub use self::core::SwitchCore;
pub use buffer::SlotBuffer;
pub use crossbar::Crossbar;
pub use islip::IslipMatcher;
pub use queues::{VirtualOutputQueues, BACKLOG_TLPS};

use weft_regs::capacity;

/// Bits of a port index: up to 16 ports.
pub const PORT_BITS: usize = 4;

/// TLP slots in each ingress buffer.
pub const SLOTS: usize = capacity::INGRESS_TLP_SLOTS;

/// Bits of a slot index.
pub const SLOT_BITS: usize = 5;

/// Beats one slot holds: the longest TLP an ingress accepts.
pub const SLOT_BEATS: usize = capacity::TLP_SLOT_BEATS;

/// Bits of a beat index within a slot.
pub const BEAT_BITS: usize = 4;

/// Bits of a beat's address in an ingress buffer: slot, then beat.
pub const BUFFER_ADDRESS_BITS: usize = SLOT_BITS + BEAT_BITS;

/// Bits of a TLP's data length in DW (1..=1024, PCIe Base 6.0 §2.2.1).
pub const LENGTH_BITS: usize = 11;

/// Class code on an ingress's `class` input: a posted request (§2.4.1).
pub const CLASS_POSTED: u64 = 0;
/// Class code on an ingress's `class` input: a non-posted request.
pub const CLASS_NON_POSTED: u64 = 1;
/// Class code on an ingress's `class` input: a completion.
pub const CLASS_COMPLETION: u64 = 2;

const _: () = assert!(SLOTS == 1 << SLOT_BITS && SLOT_BEATS == 1 << BEAT_BITS);
