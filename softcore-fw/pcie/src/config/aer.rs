//! The Advanced Error Reporting extended capability (PCIe Base 6.0 §7.8.4).

use super::ext_cap_id;
use super::list::ExtendedCapability;
use super::space::ConfigSpace;

/// Size of the structure, including the root port registers and the TLP
/// Prefix Log (which non-root functions leave reserved).
pub const SIZE: u16 = 0x48;
/// Capability version weft implements.
pub const VERSION: u8 = 2;
/// Uncorrectable Error Status, RW1C (§7.8.4.2).
pub const UNCORRECTABLE_STATUS: u16 = 0x04;
/// Uncorrectable Error Mask, RW (§7.8.4.3).
pub const UNCORRECTABLE_MASK: u16 = 0x08;
/// Uncorrectable Error Severity, RW: 1 = fatal (§7.8.4.4).
pub const UNCORRECTABLE_SEVERITY: u16 = 0x0c;
/// Correctable Error Status, RW1C (§7.8.4.5).
pub const CORRECTABLE_STATUS: u16 = 0x10;
/// Correctable Error Mask, RW (§7.8.4.6).
pub const CORRECTABLE_MASK: u16 = 0x14;
/// Advanced Error Capabilities and Control (§7.8.4.7).
pub const CAPABILITIES_AND_CONTROL: u16 = 0x18;
/// Header Log, four DWs of the first error's TLP header (§7.8.4.8).
pub const HEADER_LOG: u16 = 0x1c;
/// Root Error Command, root ports only (§7.8.4.9).
pub const ROOT_ERROR_COMMAND: u16 = 0x2c;
/// Root Error Status, root ports only (§7.8.4.10).
pub const ROOT_ERROR_STATUS: u16 = 0x30;
/// Error Source Identification, root ports only (§7.8.4.11).
pub const ERROR_SOURCE_ID: u16 = 0x34;
/// TLP Prefix Log (§7.8.4.12).
pub const TLP_PREFIX_LOG: u16 = 0x38;

/// Uncorrectable error bits, the same in Status, Mask and Severity (§7.8.4.2).
pub mod uncorrectable {
    /// Bit 4: Data Link Protocol Error.
    pub const DATA_LINK_PROTOCOL: u32 = 1 << 4;
    /// Bit 5: Surprise Down Error.
    pub const SURPRISE_DOWN: u32 = 1 << 5;
    /// Bit 12: Poisoned TLP Received.
    pub const POISONED_TLP: u32 = 1 << 12;
    /// Bit 13: Flow Control Protocol Error.
    pub const FLOW_CONTROL_PROTOCOL: u32 = 1 << 13;
    /// Bit 14: Completion Timeout.
    pub const COMPLETION_TIMEOUT: u32 = 1 << 14;
    /// Bit 15: Completer Abort.
    pub const COMPLETER_ABORT: u32 = 1 << 15;
    /// Bit 16: Unexpected Completion.
    pub const UNEXPECTED_COMPLETION: u32 = 1 << 16;
    /// Bit 17: Receiver Overflow.
    pub const RECEIVER_OVERFLOW: u32 = 1 << 17;
    /// Bit 18: Malformed TLP.
    pub const MALFORMED_TLP: u32 = 1 << 18;
    /// Bit 19: ECRC Error.
    pub const ECRC: u32 = 1 << 19;
    /// Bit 20: Unsupported Request Error.
    pub const UNSUPPORTED_REQUEST: u32 = 1 << 20;
    /// Bit 21: ACS Violation.
    pub const ACS_VIOLATION: u32 = 1 << 21;
    /// Bit 22: Uncorrectable Internal Error.
    pub const INTERNAL: u32 = 1 << 22;
    /// Bit 24: AtomicOp Egress Blocked.
    pub const ATOMIC_OP_EGRESS_BLOCKED: u32 = 1 << 24;
    /// Bit 25: TLP Prefix Blocked Error.
    pub const TLP_PREFIX_BLOCKED: u32 = 1 << 25;
    /// Bit 26: Poisoned TLP Egress Blocked.
    pub const POISONED_TLP_EGRESS_BLOCKED: u32 = 1 << 26;
    /// The errors a switch port reports: everything above except ECRC.
    pub const SWITCH_PORT: u32 = DATA_LINK_PROTOCOL
        | SURPRISE_DOWN
        | POISONED_TLP
        | FLOW_CONTROL_PROTOCOL
        | COMPLETION_TIMEOUT
        | COMPLETER_ABORT
        | UNEXPECTED_COMPLETION
        | RECEIVER_OVERFLOW
        | MALFORMED_TLP
        | UNSUPPORTED_REQUEST
        | ACS_VIOLATION
        | INTERNAL;
    /// Severity after reset: Data Link Protocol, Surprise Down, Flow Control
    /// Protocol, Receiver Overflow, Malformed TLP and Uncorrectable Internal
    /// Error are fatal (§7.8.4.4).
    pub const DEFAULT_SEVERITY: u32 = DATA_LINK_PROTOCOL
        | SURPRISE_DOWN
        | FLOW_CONTROL_PROTOCOL
        | RECEIVER_OVERFLOW
        | MALFORMED_TLP
        | INTERNAL;
    /// Mask after reset: Uncorrectable Internal Error is masked (§7.8.4.3).
    pub const DEFAULT_MASK: u32 = INTERNAL;
}

/// Correctable error bits, the same in Status and Mask (§7.8.4.5).
pub mod correctable {
    /// Bit 0: Receiver Error.
    pub const RECEIVER: u32 = 1 << 0;
    /// Bit 6: Bad TLP.
    pub const BAD_TLP: u32 = 1 << 6;
    /// Bit 7: Bad DLLP.
    pub const BAD_DLLP: u32 = 1 << 7;
    /// Bit 8: REPLAY_NUM Rollover.
    pub const REPLAY_NUM_ROLLOVER: u32 = 1 << 8;
    /// Bit 12: Replay Timer Timeout.
    pub const REPLAY_TIMER_TIMEOUT: u32 = 1 << 12;
    /// Bit 13: Advisory Non-Fatal Error.
    pub const ADVISORY_NON_FATAL: u32 = 1 << 13;
    /// Bit 14: Corrected Internal Error.
    pub const CORRECTED_INTERNAL: u32 = 1 << 14;
    /// Bit 15: Header Log Overflow.
    pub const HEADER_LOG_OVERFLOW: u32 = 1 << 15;
    /// Every correctable error bit defined above.
    pub const ALL: u32 = RECEIVER
        | BAD_TLP
        | BAD_DLLP
        | REPLAY_NUM_ROLLOVER
        | REPLAY_TIMER_TIMEOUT
        | ADVISORY_NON_FATAL
        | CORRECTED_INTERNAL
        | HEADER_LOG_OVERFLOW;
    /// Mask after reset: Advisory Non-Fatal, Corrected Internal and Header
    /// Log Overflow are masked (§7.8.4.6).
    pub const DEFAULT_MASK: u32 = ADVISORY_NON_FATAL | CORRECTED_INTERNAL | HEADER_LOG_OVERFLOW;
}

/// Advanced Error Capabilities and Control fields (§7.8.4.7).
pub mod capabilities_and_control {
    /// Bits 4:0: First Error Pointer, the bit number of the first error logged.
    pub const FIRST_ERROR_POINTER_MASK: u32 = 0x1f;
    /// Bit 5: ECRC Generation Capable.
    pub const ECRC_GENERATION_CAPABLE: u32 = 1 << 5;
    /// Bit 6: ECRC Generation Enable.
    pub const ECRC_GENERATION_ENABLE: u32 = 1 << 6;
    /// Bit 7: ECRC Check Capable.
    pub const ECRC_CHECK_CAPABLE: u32 = 1 << 7;
    /// Bit 8: ECRC Check Enable.
    pub const ECRC_CHECK_ENABLE: u32 = 1 << 8;
}

/// An AER capability to lay out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Aer {
    /// The uncorrectable errors the function can report: their status bits
    /// are RW1C and mask and severity bits RW; the rest are RO 0.
    pub uncorrectable_supported: u32,
    /// The correctable errors the function can report.
    pub correctable_supported: u32,
    /// Whether the root port registers are implemented (root ports only).
    pub root_port: bool,
}

impl Aer {
    /// What a switch port implements.
    pub const fn switch_port() -> Self {
        Aer {
            uncorrectable_supported: uncorrectable::SWITCH_PORT,
            correctable_supported: correctable::ALL,
            root_port: false,
        }
    }
}

impl ExtendedCapability for Aer {
    const ID: u16 = ext_cap_id::AER;
    const VERSION: u8 = VERSION;

    fn size_bytes(&self) -> u16 {
        SIZE
    }

    fn install(&self, space: &mut ConfigSpace, offset: u16) {
        let uncorrectable = self.uncorrectable_supported;
        let correctable = self.correctable_supported;
        space.define_u32(offset + UNCORRECTABLE_STATUS, 0, 0, uncorrectable);
        space.define_u32(
            offset + UNCORRECTABLE_MASK,
            uncorrectable::DEFAULT_MASK & uncorrectable,
            uncorrectable,
            0,
        );
        space.define_u32(
            offset + UNCORRECTABLE_SEVERITY,
            uncorrectable::DEFAULT_SEVERITY & uncorrectable,
            uncorrectable,
            0,
        );
        space.define_u32(offset + CORRECTABLE_STATUS, 0, 0, correctable);
        space.define_u32(
            offset + CORRECTABLE_MASK,
            correctable::DEFAULT_MASK & correctable,
            correctable,
            0,
        );
        for register in (CAPABILITIES_AND_CONTROL..SIZE).step_by(4) {
            space.define_u32(offset + register, 0, 0, 0);
        }
        if self.root_port {
            // Root Error Command bits 2:0 enable reporting; Root Error
            // Status bits 6:0 record received messages, RW1C.
            space.define_u32(offset + ROOT_ERROR_COMMAND, 0, 0b111, 0);
            space.define_u32(offset + ROOT_ERROR_STATUS, 0, 0, 0x7f);
        }
    }
}

/// An AER capability found in a space.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AerCap {
    /// Offset of the capability header.
    pub offset: u16,
}

impl AerCap {
    /// The capability at `offset`.
    pub const fn at(offset: u16) -> Self {
        AerCap { offset }
    }

    /// Uncorrectable Error Status.
    pub const fn uncorrectable_status(self, space: &ConfigSpace) -> u32 {
        space.read_u32(self.offset + UNCORRECTABLE_STATUS)
    }

    /// Correctable Error Status.
    pub const fn correctable_status(self, space: &ConfigSpace) -> u32 {
        space.read_u32(self.offset + CORRECTABLE_STATUS)
    }

    /// Whether an uncorrectable error is fatal by the programmed severity.
    pub const fn is_fatal(self, space: &ConfigSpace, error: u32) -> bool {
        space.read_u32(self.offset + UNCORRECTABLE_SEVERITY) & error != 0
    }

    /// The function's hardware records an uncorrectable error: sets its
    /// status bit and, if no error is logged yet, the First Error Pointer
    /// and the Header Log (§7.8.4.7, §7.8.4.8). `error` is one bit of
    /// [`uncorrectable`].
    pub fn record_uncorrectable(self, space: &mut ConfigSpace, error: u32, header: [u32; 4]) {
        let logged = self.uncorrectable_status(space) != 0;
        space.set_bits_u32(self.offset + UNCORRECTABLE_STATUS, error);
        if !logged && error != 0 {
            let control = space.read_u32(self.offset + CAPABILITIES_AND_CONTROL)
                & !capabilities_and_control::FIRST_ERROR_POINTER_MASK;
            space.set_u32(
                self.offset + CAPABILITIES_AND_CONTROL,
                control | error.trailing_zeros(),
            );
            for (index, dword) in header.iter().enumerate() {
                space.set_u32(self.offset + HEADER_LOG + 4 * index as u16, *dword);
            }
        }
    }

    /// The four logged header DWs.
    pub const fn header_log(self, space: &ConfigSpace) -> [u32; 4] {
        let base = self.offset + HEADER_LOG;
        [
            space.read_u32(base),
            space.read_u32(base + 4),
            space.read_u32(base + 8),
            space.read_u32(base + 12),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_is_rw1c_mask_and_severity_are_rw_with_spec_defaults() {
        let mut space = ConfigSpace::new();
        Aer::switch_port().install(&mut space, 0x100);
        // Default severity 0x0046_2030 (§7.8.4.4), mask 0x0040_0000.
        assert_eq!(space.read(0x10c), 0x0046_2030);
        assert_eq!(space.read(0x108), 0x0040_0000);
        assert_eq!(space.read(0x114), 0x0000_e000);
        let cap = AerCap::at(0x100);
        cap.record_uncorrectable(&mut space, uncorrectable::UNSUPPORTED_REQUEST, [1, 2, 3, 4]);
        cap.record_uncorrectable(&mut space, uncorrectable::COMPLETION_TIMEOUT, [5, 6, 7, 8]);
        assert_eq!(cap.uncorrectable_status(&space), 0x0010_4000);
        assert_eq!(space.read(0x118) & 0x1f, 20, "first error: UR, bit 20");
        assert_eq!(cap.header_log(&space), [1, 2, 3, 4]);
        space.write_u32(0x104, uncorrectable::UNSUPPORTED_REQUEST);
        assert_eq!(cap.uncorrectable_status(&space), 0x0000_4000);
        // ECRC is not supported by a switch port here: its bits stay 0.
        space.write_u32(0x108, 0xffff_ffff);
        assert_eq!(space.read(0x108), uncorrectable::SWITCH_PORT);
        assert!(!cap.is_fatal(&space, uncorrectable::COMPLETION_TIMEOUT));
    }
}
