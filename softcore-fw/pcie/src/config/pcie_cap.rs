//! The PCI Express Capability structure (PCIe Base 6.0 §7.5.3): port type,
//! device, link and slot registers, including hot-plug.
//!
//! [`PcieCapability`] lays the structure out for one function with the write
//! masks its port type implies; [`PcieCap`] is a handle to a structure found
//! in a space, with typed accessors. Bits that software writes to trigger an
//! action and that always read 0 (Initiate Function Level Reset, Retrain
//! Link) are read-only zero here: whoever models the function sees the write
//! request itself.

use super::cap_id;
use super::list::Capability;
use super::space::{ConfigRegisters, ConfigSpace};
use super::walk::{find_capability, WalkError};
use core::convert::Infallible;

/// Size of the structure for a version 2 capability (through Slot Status 2).
pub const SIZE: u16 = 0x3c;
/// The capability version weft implements (§7.5.3.2).
pub const VERSION: u16 = 2;

/// PCI Express Capabilities Register, 16 bits (§7.5.3.2).
pub const CAPABILITIES: u16 = 0x02;
/// Device Capabilities, 32 bits (§7.5.3.3).
pub const DEVICE_CAPABILITIES: u16 = 0x04;
/// Device Control, 16 bits (§7.5.3.4).
pub const DEVICE_CONTROL: u16 = 0x08;
/// Device Status, 16 bits (§7.5.3.5).
pub const DEVICE_STATUS: u16 = 0x0a;
/// Link Capabilities, 32 bits (§7.5.3.6).
pub const LINK_CAPABILITIES: u16 = 0x0c;
/// Link Control, 16 bits (§7.5.3.7).
pub const LINK_CONTROL: u16 = 0x10;
/// Link Status, 16 bits (§7.5.3.8).
pub const LINK_STATUS: u16 = 0x12;
/// Slot Capabilities, 32 bits (§7.5.3.9).
pub const SLOT_CAPABILITIES: u16 = 0x14;
/// Slot Control, 16 bits (§7.5.3.10).
pub const SLOT_CONTROL: u16 = 0x18;
/// Slot Status, 16 bits (§7.5.3.11).
pub const SLOT_STATUS: u16 = 0x1a;
/// Root Control, 16 bits, root ports and event collectors (§7.5.3.12).
pub const ROOT_CONTROL: u16 = 0x1c;
/// Root Capabilities, 16 bits (§7.5.3.13).
pub const ROOT_CAPABILITIES: u16 = 0x1e;
/// Root Status, 32 bits (§7.5.3.14).
pub const ROOT_STATUS: u16 = 0x20;
/// Device Capabilities 2, 32 bits (§7.5.3.15).
pub const DEVICE_CAPABILITIES_2: u16 = 0x24;
/// Device Control 2, 16 bits (§7.5.3.16).
pub const DEVICE_CONTROL_2: u16 = 0x28;
/// Device Status 2, 16 bits (§7.5.3.17).
pub const DEVICE_STATUS_2: u16 = 0x2a;
/// Link Capabilities 2, 32 bits (§7.5.3.18).
pub const LINK_CAPABILITIES_2: u16 = 0x2c;
/// Link Control 2, 16 bits (§7.5.3.19).
pub const LINK_CONTROL_2: u16 = 0x30;
/// Link Status 2, 16 bits (§7.5.3.20).
pub const LINK_STATUS_2: u16 = 0x32;
/// Slot Capabilities 2, 32 bits (§7.5.3.21).
pub const SLOT_CAPABILITIES_2: u16 = 0x34;
/// Slot Control 2, 16 bits (§7.5.3.22).
pub const SLOT_CONTROL_2: u16 = 0x38;
/// Slot Status 2, 16 bits (§7.5.3.23).
pub const SLOT_STATUS_2: u16 = 0x3a;

/// PCI Express Capabilities Register fields (§7.5.3.2).
pub mod capabilities {
    /// Bits 3:0: Capability Version.
    pub const VERSION_MASK: u16 = 0x000f;
    /// Bits 7:4: Device/Port Type.
    pub const PORT_TYPE_SHIFT: u32 = 4;
    /// Mask of the Device/Port Type field.
    pub const PORT_TYPE_MASK: u16 = 0x00f0;
    /// Bit 8: Slot Implemented (root ports and downstream switch ports).
    pub const SLOT_IMPLEMENTED: u16 = 1 << 8;
    /// Bits 13:9: Interrupt Message Number (MSI/MSI-X vector for this
    /// capability's events, e.g. hot-plug).
    pub const INTERRUPT_MESSAGE_NUMBER_SHIFT: u32 = 9;
    /// Mask of the Interrupt Message Number field.
    pub const INTERRUPT_MESSAGE_NUMBER_MASK: u16 = 0x1f << 9;
    /// Bit 15: Flit Mode Supported.
    pub const FLIT_MODE_SUPPORTED: u16 = 1 << 15;
}

/// Device/Port Type values (§7.5.3.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PortType {
    /// PCI Express Endpoint.
    Endpoint = 0b0000,
    /// Legacy PCI Express Endpoint.
    LegacyEndpoint = 0b0001,
    /// Root Port of a Root Complex.
    RootPort = 0b0100,
    /// Upstream Port of a Switch.
    SwitchUpstream = 0b0101,
    /// Downstream Port of a Switch.
    SwitchDownstream = 0b0110,
    /// PCI Express to PCI/PCI-X Bridge.
    PcieToPciBridge = 0b0111,
    /// PCI/PCI-X to PCI Express Bridge.
    PciToPcieBridge = 0b1000,
    /// Root Complex Integrated Endpoint: no link.
    RootComplexIntegratedEndpoint = 0b1001,
    /// Root Complex Event Collector: no link.
    RootComplexEventCollector = 0b1010,
}

impl PortType {
    /// Decodes the 4-bit field; `None` for reserved encodings.
    pub const fn from_bits(bits: u8) -> Option<Self> {
        Some(match bits {
            0b0000 => PortType::Endpoint,
            0b0001 => PortType::LegacyEndpoint,
            0b0100 => PortType::RootPort,
            0b0101 => PortType::SwitchUpstream,
            0b0110 => PortType::SwitchDownstream,
            0b0111 => PortType::PcieToPciBridge,
            0b1000 => PortType::PciToPcieBridge,
            0b1001 => PortType::RootComplexIntegratedEndpoint,
            0b1010 => PortType::RootComplexEventCollector,
            _ => return None,
        })
    }

    /// Whether the function has a Link (RC integrated functions do not, so
    /// their link registers are reserved, §7.5.3).
    pub const fn has_link(self) -> bool {
        !matches!(
            self,
            PortType::RootComplexIntegratedEndpoint | PortType::RootComplexEventCollector
        )
    }

    /// Whether the port faces downstream: the only ports that may have a
    /// slot, disable their link or report Link Bandwidth Notification.
    pub const fn is_downstream(self) -> bool {
        matches!(self, PortType::RootPort | PortType::SwitchDownstream)
    }

    /// Whether the Root registers (0x1C..0x24) are implemented.
    pub const fn has_root_registers(self) -> bool {
        matches!(
            self,
            PortType::RootPort | PortType::RootComplexEventCollector
        )
    }
}

/// Device Capabilities fields (§7.5.3.3).
pub mod device_capabilities {
    /// Bits 2:0: Max_Payload_Size Supported (encoding as [`super::payload_bytes_from_encoding`]).
    pub const MAX_PAYLOAD_SUPPORTED_MASK: u32 = 0x7;
    /// Bits 4:3: Phantom Functions Supported.
    pub const PHANTOM_FUNCTIONS_MASK: u32 = 0b11 << 3;
    /// Bit 5: Extended Tag Field Supported (8-bit tags).
    pub const EXTENDED_TAG_SUPPORTED: u32 = 1 << 5;
    /// Bit 15: Role-Based Error Reporting, 1 in every new design.
    pub const ROLE_BASED_ERROR_REPORTING: u32 = 1 << 15;
    /// Bit 28: Function Level Reset Capability.
    pub const FLR_CAPABLE: u32 = 1 << 28;
}

/// Device Control fields (§7.5.3.4).
pub mod device_control {
    /// Bit 0: Correctable Error Reporting Enable.
    pub const CORRECTABLE_ERROR_REPORTING: u16 = 1 << 0;
    /// Bit 1: Non-Fatal Error Reporting Enable.
    pub const NON_FATAL_ERROR_REPORTING: u16 = 1 << 1;
    /// Bit 2: Fatal Error Reporting Enable.
    pub const FATAL_ERROR_REPORTING: u16 = 1 << 2;
    /// Bit 3: Unsupported Request Reporting Enable.
    pub const UNSUPPORTED_REQUEST_REPORTING: u16 = 1 << 3;
    /// Bit 4: Enable Relaxed Ordering (default 1).
    pub const RELAXED_ORDERING: u16 = 1 << 4;
    /// Bits 7:5: Max_Payload_Size.
    pub const MAX_PAYLOAD_SHIFT: u32 = 5;
    /// Mask of Max_Payload_Size.
    pub const MAX_PAYLOAD_MASK: u16 = 0b111 << 5;
    /// Bit 8: Extended Tag Field Enable.
    pub const EXTENDED_TAG: u16 = 1 << 8;
    /// Bit 9: Phantom Functions Enable.
    pub const PHANTOM_FUNCTIONS: u16 = 1 << 9;
    /// Bit 10: Aux Power PM Enable.
    pub const AUX_POWER_PM: u16 = 1 << 10;
    /// Bit 11: Enable No Snoop (default 1).
    pub const NO_SNOOP: u16 = 1 << 11;
    /// Bits 14:12: Max_Read_Request_Size (default 010b, 512 bytes).
    pub const MAX_READ_REQUEST_SHIFT: u32 = 12;
    /// Mask of Max_Read_Request_Size.
    pub const MAX_READ_REQUEST_MASK: u16 = 0b111 << 12;
    /// Bit 15: Initiate Function Level Reset (endpoints) or Bridge
    /// Configuration Retry Enable (PCIe-to-PCI bridges).
    pub const INITIATE_FLR: u16 = 1 << 15;
    /// The value after reset: Relaxed Ordering and No Snoop enabled,
    /// MPS 128 bytes, MRRS 512 bytes.
    pub const RESET_VALUE: u16 = RELAXED_ORDERING | NO_SNOOP | (0b010 << 12);
}

/// Device Status fields (§7.5.3.5).
pub mod device_status {
    /// Bit 0: Correctable Error Detected, RW1C.
    pub const CORRECTABLE_ERROR: u16 = 1 << 0;
    /// Bit 1: Non-Fatal Error Detected, RW1C.
    pub const NON_FATAL_ERROR: u16 = 1 << 1;
    /// Bit 2: Fatal Error Detected, RW1C.
    pub const FATAL_ERROR: u16 = 1 << 2;
    /// Bit 3: Unsupported Request Detected, RW1C.
    pub const UNSUPPORTED_REQUEST: u16 = 1 << 3;
    /// Bit 4: AUX Power Detected, RO.
    pub const AUX_POWER: u16 = 1 << 4;
    /// Bit 5: Transactions Pending, RO.
    pub const TRANSACTIONS_PENDING: u16 = 1 << 5;
    /// The RW1C error bits.
    pub const RW1C_BITS: u16 =
        CORRECTABLE_ERROR | NON_FATAL_ERROR | FATAL_ERROR | UNSUPPORTED_REQUEST;
}

/// Link speed encodings shared by Max Link Speed, Current Link Speed and
/// Target Link Speed: the value n names bit n-1 of the Supported Link
/// Speeds Vector (§7.5.3.6, §7.5.3.18).
pub mod link_speed {
    /// 2.5 GT/s (Gen1).
    pub const GT_2_5: u8 = 1;
    /// 5.0 GT/s (Gen2).
    pub const GT_5: u8 = 2;
    /// 8.0 GT/s (Gen3).
    pub const GT_8: u8 = 3;
    /// 16.0 GT/s (Gen4).
    pub const GT_16: u8 = 4;
    /// 32.0 GT/s (Gen5).
    pub const GT_32: u8 = 5;
    /// 64.0 GT/s (Gen6).
    pub const GT_64: u8 = 6;

    /// The Supported Link Speeds Vector (Link Capabilities 2 bits 7:1) of a
    /// port supporting every speed up to `max`.
    pub const fn supported_vector_up_to(max: u8) -> u32 {
        if max == 0 || max > 7 {
            return 0;
        }
        ((1u32 << max) - 1) << 1
    }
}

/// Link Capabilities fields (§7.5.3.6).
pub mod link_capabilities {
    /// Bits 3:0: Max Link Speed.
    pub const MAX_SPEED_MASK: u32 = 0xf;
    /// Bits 9:4: Maximum Link Width (x1 = 1, x16 = 16).
    pub const MAX_WIDTH_SHIFT: u32 = 4;
    /// Mask of Maximum Link Width.
    pub const MAX_WIDTH_MASK: u32 = 0x3f << 4;
    /// Bits 11:10: ASPM Support.
    pub const ASPM_SUPPORT_MASK: u32 = 0b11 << 10;
    /// Bit 18: Clock Power Management.
    pub const CLOCK_PM: u32 = 1 << 18;
    /// Bit 19: Surprise Down Error Reporting Capable.
    pub const SURPRISE_DOWN_REPORTING: u32 = 1 << 19;
    /// Bit 20: Data Link Layer Link Active Reporting Capable (needed for
    /// hot-plug by DLL state change).
    pub const DLL_LINK_ACTIVE_REPORTING: u32 = 1 << 20;
    /// Bit 21: Link Bandwidth Notification Capability.
    pub const LINK_BANDWIDTH_NOTIFICATION: u32 = 1 << 21;
    /// Bits 31:24: Port Number.
    pub const PORT_NUMBER_SHIFT: u32 = 24;
}

/// Link Control fields (§7.5.3.7).
pub mod link_control {
    /// Bits 1:0: ASPM Control.
    pub const ASPM_CONTROL_MASK: u16 = 0b11;
    /// Bit 4: Link Disable (downstream ports).
    pub const LINK_DISABLE: u16 = 1 << 4;
    /// Bit 5: Retrain Link (downstream ports; always reads 0).
    pub const RETRAIN_LINK: u16 = 1 << 5;
    /// Bit 6: Common Clock Configuration.
    pub const COMMON_CLOCK: u16 = 1 << 6;
    /// Bit 7: Extended Synch.
    pub const EXTENDED_SYNCH: u16 = 1 << 7;
    /// Bit 8: Enable Clock Power Management.
    pub const CLOCK_PM: u16 = 1 << 8;
    /// Bit 9: Hardware Autonomous Width Disable.
    pub const HW_AUTONOMOUS_WIDTH_DISABLE: u16 = 1 << 9;
    /// Bit 10: Link Bandwidth Management Interrupt Enable.
    pub const BANDWIDTH_MANAGEMENT_INTERRUPT: u16 = 1 << 10;
    /// Bit 11: Link Autonomous Bandwidth Interrupt Enable.
    pub const AUTONOMOUS_BANDWIDTH_INTERRUPT: u16 = 1 << 11;
}

/// Link Status fields (§7.5.3.8).
pub mod link_status {
    /// Bits 3:0: Current Link Speed.
    pub const CURRENT_SPEED_MASK: u16 = 0xf;
    /// Bits 9:4: Negotiated Link Width.
    pub const NEGOTIATED_WIDTH_SHIFT: u32 = 4;
    /// Mask of Negotiated Link Width.
    pub const NEGOTIATED_WIDTH_MASK: u16 = 0x3f << 4;
    /// Bit 11: Link Training.
    pub const LINK_TRAINING: u16 = 1 << 11;
    /// Bit 12: Slot Clock Configuration.
    pub const SLOT_CLOCK_CONFIGURATION: u16 = 1 << 12;
    /// Bit 13: Data Link Layer Link Active.
    pub const DLL_LINK_ACTIVE: u16 = 1 << 13;
    /// Bit 14: Link Bandwidth Management Status, RW1C.
    pub const BANDWIDTH_MANAGEMENT_STATUS: u16 = 1 << 14;
    /// Bit 15: Link Autonomous Bandwidth Status, RW1C.
    pub const AUTONOMOUS_BANDWIDTH_STATUS: u16 = 1 << 15;
}

/// Slot Capabilities fields (§7.5.3.9).
pub mod slot_capabilities {
    /// Bit 0: Attention Button Present.
    pub const ATTENTION_BUTTON: u32 = 1 << 0;
    /// Bit 1: Power Controller Present.
    pub const POWER_CONTROLLER: u32 = 1 << 1;
    /// Bit 2: MRL Sensor Present.
    pub const MRL_SENSOR: u32 = 1 << 2;
    /// Bit 3: Attention Indicator Present.
    pub const ATTENTION_INDICATOR: u32 = 1 << 3;
    /// Bit 4: Power Indicator Present.
    pub const POWER_INDICATOR: u32 = 1 << 4;
    /// Bit 5: Hot-Plug Surprise: the adapter may be removed without notice.
    pub const HOT_PLUG_SURPRISE: u32 = 1 << 5;
    /// Bit 6: Hot-Plug Capable.
    pub const HOT_PLUG_CAPABLE: u32 = 1 << 6;
    /// Bits 14:7: Slot Power Limit Value.
    pub const POWER_LIMIT_VALUE_SHIFT: u32 = 7;
    /// Bits 16:15: Slot Power Limit Scale.
    pub const POWER_LIMIT_SCALE_SHIFT: u32 = 15;
    /// Bit 17: Electromechanical Interlock Present.
    pub const ELECTROMECHANICAL_INTERLOCK: u32 = 1 << 17;
    /// Bit 18: No Command Completed Support: the slot finishes every
    /// Slot Control write at once and never sets Command Completed.
    pub const NO_COMMAND_COMPLETED: u32 = 1 << 18;
    /// Bits 31:19: Physical Slot Number.
    pub const PHYSICAL_SLOT_SHIFT: u32 = 19;
    /// Mask of Physical Slot Number.
    pub const PHYSICAL_SLOT_MASK: u32 = 0x1fff << 19;
}

/// Slot Control fields (§7.5.3.10).
pub mod slot_control {
    /// Bit 0: Attention Button Pressed Enable.
    pub const ATTENTION_BUTTON_PRESSED_ENABLE: u16 = 1 << 0;
    /// Bit 1: Power Fault Detected Enable.
    pub const POWER_FAULT_DETECTED_ENABLE: u16 = 1 << 1;
    /// Bit 2: MRL Sensor Changed Enable.
    pub const MRL_SENSOR_CHANGED_ENABLE: u16 = 1 << 2;
    /// Bit 3: Presence Detect Changed Enable.
    pub const PRESENCE_DETECT_CHANGED_ENABLE: u16 = 1 << 3;
    /// Bit 4: Command Completed Interrupt Enable.
    pub const COMMAND_COMPLETED_INTERRUPT_ENABLE: u16 = 1 << 4;
    /// Bit 5: Hot-Plug Interrupt Enable.
    pub const HOT_PLUG_INTERRUPT_ENABLE: u16 = 1 << 5;
    /// Bits 7:6: Attention Indicator Control (01b on, 10b blink, 11b off).
    pub const ATTENTION_INDICATOR_MASK: u16 = 0b11 << 6;
    /// Bits 9:8: Power Indicator Control (01b on, 10b blink, 11b off).
    pub const POWER_INDICATOR_MASK: u16 = 0b11 << 8;
    /// Bit 10: Power Controller Control (0 power on, 1 power off).
    pub const POWER_CONTROLLER_OFF: u16 = 1 << 10;
    /// Bit 11: Electromechanical Interlock Control (toggles the interlock).
    pub const ELECTROMECHANICAL_INTERLOCK_CONTROL: u16 = 1 << 11;
    /// Bit 12: Data Link Layer State Changed Enable.
    pub const DLL_STATE_CHANGED_ENABLE: u16 = 1 << 12;
    /// Bit 13: Auto Slot Power Limit Disable.
    pub const AUTO_SLOT_POWER_LIMIT_DISABLE: u16 = 1 << 13;
    /// Shift of Attention Indicator Control.
    pub const ATTENTION_INDICATOR_SHIFT: u16 = 6;
    /// Shift of Power Indicator Control.
    pub const POWER_INDICATOR_SHIFT: u16 = 8;
    /// The fields whose write is a command the hot-plug controller carries
    /// out (§6.7.3.2): indicators, power and the interlock.
    pub const COMMANDS: u16 = ATTENTION_INDICATOR_MASK
        | POWER_INDICATOR_MASK
        | POWER_CONTROLLER_OFF
        | ELECTROMECHANICAL_INTERLOCK_CONTROL;
}

/// A Power or Attention Indicator state, as Slot Control encodes it
/// (§7.5.3.10, §6.7.1.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Indicator {
    /// 00b: reserved.
    Reserved = 0b00,
    /// 01b: on.
    On = 0b01,
    /// 10b: blinking.
    Blink = 0b10,
    /// 11b: off.
    Off = 0b11,
}

impl Indicator {
    /// The state a 2-bit field holds.
    pub const fn from_bits(bits: u16) -> Self {
        match bits & 0b11 {
            0b01 => Indicator::On,
            0b10 => Indicator::Blink,
            0b11 => Indicator::Off,
            _ => Indicator::Reserved,
        }
    }

    /// The Power Indicator Control in Slot Control `control`.
    pub const fn power(control: u16) -> Self {
        Self::from_bits(control >> slot_control::POWER_INDICATOR_SHIFT)
    }

    /// The Attention Indicator Control in Slot Control `control`.
    pub const fn attention(control: u16) -> Self {
        Self::from_bits(control >> slot_control::ATTENTION_INDICATOR_SHIFT)
    }

    /// Slot Control `control` with its Power Indicator Control set to this.
    pub const fn set_power(self, control: u16) -> u16 {
        control & !slot_control::POWER_INDICATOR_MASK
            | (self as u16) << slot_control::POWER_INDICATOR_SHIFT
    }

    /// Slot Control `control` with its Attention Indicator Control set to this.
    pub const fn set_attention(self, control: u16) -> u16 {
        control & !slot_control::ATTENTION_INDICATOR_MASK
            | (self as u16) << slot_control::ATTENTION_INDICATOR_SHIFT
    }
}

/// Slot Status fields (§7.5.3.11).
pub mod slot_status {
    /// Bit 0: Attention Button Pressed, RW1C.
    pub const ATTENTION_BUTTON_PRESSED: u16 = 1 << 0;
    /// Bit 1: Power Fault Detected, RW1C.
    pub const POWER_FAULT_DETECTED: u16 = 1 << 1;
    /// Bit 2: MRL Sensor Changed, RW1C.
    pub const MRL_SENSOR_CHANGED: u16 = 1 << 2;
    /// Bit 3: Presence Detect Changed, RW1C.
    pub const PRESENCE_DETECT_CHANGED: u16 = 1 << 3;
    /// Bit 4: Command Completed, RW1C.
    pub const COMMAND_COMPLETED: u16 = 1 << 4;
    /// Bit 5: MRL Sensor State, RO (1 = open).
    pub const MRL_SENSOR_STATE: u16 = 1 << 5;
    /// Bit 6: Presence Detect State, RO (1 = adapter present).
    pub const PRESENCE_DETECT_STATE: u16 = 1 << 6;
    /// Bit 7: Electromechanical Interlock Status, RO (1 = engaged).
    pub const ELECTROMECHANICAL_INTERLOCK_STATUS: u16 = 1 << 7;
    /// Bit 8: Data Link Layer State Changed, RW1C.
    pub const DLL_STATE_CHANGED: u16 = 1 << 8;
    /// The event bits, all RW1C.
    pub const EVENTS: u16 = ATTENTION_BUTTON_PRESSED
        | POWER_FAULT_DETECTED
        | MRL_SENSOR_CHANGED
        | PRESENCE_DETECT_CHANGED
        | COMMAND_COMPLETED
        | DLL_STATE_CHANGED;
    /// The state bits, all RO.
    pub const STATE: u16 =
        MRL_SENSOR_STATE | PRESENCE_DETECT_STATE | ELECTROMECHANICAL_INTERLOCK_STATUS;
}

/// Root Control and Root Status fields (§7.5.3.12, §7.5.3.14).
pub mod root {
    /// Root Control bits 4:0: System Error on Correctable/Non-Fatal/Fatal,
    /// PME Interrupt Enable, CRS Software Visibility Enable.
    pub const CONTROL_RW_BITS: u16 = 0x1f;
    /// Root Status bit 16: PME Status, RW1C.
    pub const PME_STATUS: u32 = 1 << 16;
}

/// Device Capabilities 2 fields (§7.5.3.15).
pub mod device_capabilities_2 {
    /// Bits 3:0: Completion Timeout Ranges Supported (0 = not programmable).
    pub const COMPLETION_TIMEOUT_RANGES_MASK: u32 = 0xf;
    /// Bit 4: Completion Timeout Disable Supported.
    pub const COMPLETION_TIMEOUT_DISABLE_SUPPORTED: u32 = 1 << 4;
    /// Bit 5: ARI Forwarding Supported (downstream ports).
    pub const ARI_FORWARDING_SUPPORTED: u32 = 1 << 5;
    /// Bit 16: 10-Bit Tag Completer Supported.
    pub const TEN_BIT_TAG_COMPLETER: u32 = 1 << 16;
    /// Bit 17: 10-Bit Tag Requester Supported.
    pub const TEN_BIT_TAG_REQUESTER: u32 = 1 << 17;
}

/// Device Control 2 fields (§7.5.3.16).
pub mod device_control_2 {
    /// Bits 3:0: Completion Timeout Value (encoding per §7.5.3.16).
    pub const COMPLETION_TIMEOUT_VALUE_MASK: u16 = 0xf;
    /// Bit 4: Completion Timeout Disable.
    pub const COMPLETION_TIMEOUT_DISABLE: u16 = 1 << 4;
    /// Bit 5: ARI Forwarding Enable: the port forwards Type 0 configuration
    /// requests to any function number on its link, not only device 0 (§6.13).
    pub const ARI_FORWARDING_ENABLE: u16 = 1 << 5;
    /// Bit 12: 10-Bit Tag Requester Enable.
    pub const TEN_BIT_TAG_REQUESTER_ENABLE: u16 = 1 << 12;
}

/// Link Control 2 fields (§7.5.3.19).
pub mod link_control_2 {
    /// Bits 3:0: Target Link Speed.
    pub const TARGET_SPEED_MASK: u16 = 0xf;
    /// Bit 5: Hardware Autonomous Speed Disable.
    pub const HW_AUTONOMOUS_SPEED_DISABLE: u16 = 1 << 5;
}

/// The bytes a Max_Payload_Size or Max_Read_Request_Size encoding stands
/// for: 000b = 128 up to 101b = 4096 (§7.5.3.4); `None` for the reserved
/// encodings 110b and 111b.
pub const fn payload_bytes_from_encoding(encoding: u8) -> Option<u16> {
    if encoding <= 5 {
        Some(128 << encoding)
    } else {
        None
    }
}

/// The Max_Payload_Size / Max_Read_Request_Size encoding of a byte count;
/// `None` unless it is a power of two from 128 to 4096.
pub const fn payload_encoding_from_bytes(bytes: u16) -> Option<u8> {
    match bytes {
        128 => Some(0),
        256 => Some(1),
        512 => Some(2),
        1024 => Some(3),
        2048 => Some(4),
        4096 => Some(5),
        _ => None,
    }
}

/// The slot a root port or downstream switch port exposes (§7.5.3.9).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Slot {
    /// Slot Capabilities bits (see [`slot_capabilities`]), without the
    /// Physical Slot Number.
    pub capabilities: u32,
    /// Physical Slot Number, 13 bits, unique in the chassis.
    pub physical_slot_number: u16,
}

impl Slot {
    /// A hot-plug slot as a virtual downstream port presents it: hot-plug
    /// capable, surprise removal allowed, no button, MRL, power controller
    /// or indicators, and No Command Completed Support, so the host never
    /// waits for a command to complete.
    pub const fn hot_plug(physical_slot_number: u16) -> Self {
        Slot {
            capabilities: slot_capabilities::HOT_PLUG_CAPABLE
                | slot_capabilities::HOT_PLUG_SURPRISE
                | slot_capabilities::NO_COMMAND_COMPLETED,
            physical_slot_number,
        }
    }

    /// A hot-plug slot of the standard usage model (§6.7.1): an Attention
    /// Button (§6.7.1.5) with which the system asks the host to release the
    /// adapter, a Power Controller (§6.7.1.8) with which the host's driver
    /// powers the slot off once it has, Power and Attention Indicators
    /// (§6.7.1.1) it blinks while it does, and Command Completed reported
    /// for every Slot Control write (§6.7.3.2). Surprise removal stays
    /// allowed.
    pub const fn attention_button(physical_slot_number: u16) -> Self {
        Slot {
            capabilities: slot_capabilities::HOT_PLUG_CAPABLE
                | slot_capabilities::HOT_PLUG_SURPRISE
                | slot_capabilities::ATTENTION_BUTTON
                | slot_capabilities::POWER_CONTROLLER
                | slot_capabilities::ATTENTION_INDICATOR
                | slot_capabilities::POWER_INDICATOR,
            physical_slot_number,
        }
    }

    const fn register(&self) -> u32 {
        (self.capabilities & !slot_capabilities::PHYSICAL_SLOT_MASK)
            | ((self.physical_slot_number as u32) << slot_capabilities::PHYSICAL_SLOT_SHIFT
                & slot_capabilities::PHYSICAL_SLOT_MASK)
    }

    /// The Slot Control bits software may write, given what the slot has.
    fn control_rw_mask(&self) -> u16 {
        let has = |bit: u32| self.capabilities & bit != 0;
        let mut mask = slot_control::PRESENCE_DETECT_CHANGED_ENABLE
            | slot_control::HOT_PLUG_INTERRUPT_ENABLE
            | slot_control::DLL_STATE_CHANGED_ENABLE;
        if !has(slot_capabilities::NO_COMMAND_COMPLETED) {
            mask |= slot_control::COMMAND_COMPLETED_INTERRUPT_ENABLE;
        }
        if has(slot_capabilities::ATTENTION_BUTTON) {
            mask |= slot_control::ATTENTION_BUTTON_PRESSED_ENABLE;
        }
        if has(slot_capabilities::POWER_CONTROLLER) {
            mask |= slot_control::POWER_FAULT_DETECTED_ENABLE | slot_control::POWER_CONTROLLER_OFF;
        }
        if has(slot_capabilities::MRL_SENSOR) {
            mask |= slot_control::MRL_SENSOR_CHANGED_ENABLE;
        }
        if has(slot_capabilities::ATTENTION_INDICATOR) {
            mask |= slot_control::ATTENTION_INDICATOR_MASK;
        }
        if has(slot_capabilities::POWER_INDICATOR) {
            mask |= slot_control::POWER_INDICATOR_MASK;
        }
        if has(slot_capabilities::ELECTROMECHANICAL_INTERLOCK) {
            mask |= slot_control::ELECTROMECHANICAL_INTERLOCK_CONTROL;
        }
        mask
    }
}

/// The link a function's port has: its capabilities and its state after
/// training (Link Status is read-only; the port's hardware sets it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Link {
    /// Max Link Speed ([`link_speed`] encoding).
    pub max_speed: u8,
    /// Maximum Link Width in lanes.
    pub max_width: u8,
    /// Port Number reported in Link Capabilities.
    pub port_number: u8,
    /// Other Link Capabilities bits (see [`link_capabilities`]).
    pub capabilities: u32,
    /// Current Link Speed after training.
    pub current_speed: u8,
    /// Negotiated Link Width after training.
    pub negotiated_width: u8,
}

impl Link {
    /// A link trained at its maximum speed and width.
    pub const fn trained(max_speed: u8, max_width: u8, port_number: u8) -> Self {
        Link {
            max_speed,
            max_width,
            port_number,
            capabilities: 0,
            current_speed: max_speed,
            negotiated_width: max_width,
        }
    }
}

/// Why a PCI Express capability cannot be laid out as described.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PcieCapabilityError {
    /// Only root ports and downstream switch ports have a slot (§7.5.3.2).
    SlotNotAllowed {
        /// The port type given.
        port_type: PortType,
    },
    /// Max_Payload_Size Supported above 101b (4096 bytes).
    InvalidMaxPayloadSupported {
        /// The encoding given.
        encoding: u8,
    },
}

/// A PCI Express capability to lay out (§7.5.3), version 2.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PcieCapability {
    /// Device/Port Type.
    pub port_type: PortType,
    /// Interrupt Message Number for this capability's events (5 bits).
    pub interrupt_message_number: u8,
    /// Device Capabilities bits other than Max_Payload_Size Supported
    /// (see [`device_capabilities`]).
    pub device_capabilities: u32,
    /// Max_Payload_Size Supported encoding (0 = 128 bytes .. 5 = 4096 bytes).
    pub max_payload_supported: u8,
    /// The link, for every type but RC integrated functions.
    pub link: Option<Link>,
    /// The slot, for root ports and downstream switch ports that have one.
    pub slot: Option<Slot>,
    /// Device Capabilities 2 bits (see [`device_capabilities_2`]).
    pub device_capabilities_2: u32,
}

impl PcieCapability {
    /// A capability for `port_type` with Role-Based Error Reporting, MPS
    /// Supported 256 bytes, no link, no slot, and nothing in Device
    /// Capabilities 2.
    pub const fn new(port_type: PortType) -> Self {
        PcieCapability {
            port_type,
            interrupt_message_number: 0,
            device_capabilities: device_capabilities::ROLE_BASED_ERROR_REPORTING,
            max_payload_supported: 1,
            link: None,
            slot: None,
            device_capabilities_2: 0,
        }
    }

    /// Checks the description against the rules the builder keeps.
    pub const fn validate(&self) -> Result<(), PcieCapabilityError> {
        if self.slot.is_some() && !self.port_type.is_downstream() {
            return Err(PcieCapabilityError::SlotNotAllowed {
                port_type: self.port_type,
            });
        }
        if self.max_payload_supported > 5 {
            return Err(PcieCapabilityError::InvalidMaxPayloadSupported {
                encoding: self.max_payload_supported,
            });
        }
        Ok(())
    }

    fn install_link(&self, space: &mut ConfigSpace, offset: u16, link: &Link) {
        let downstream = self.port_type.is_downstream();
        let capabilities = (link.capabilities
            & !(link_capabilities::MAX_SPEED_MASK
                | link_capabilities::MAX_WIDTH_MASK
                | 0xff00_0000))
            | u32::from(link.max_speed) & link_capabilities::MAX_SPEED_MASK
            | (u32::from(link.max_width) << link_capabilities::MAX_WIDTH_SHIFT)
                & link_capabilities::MAX_WIDTH_MASK
            | u32::from(link.port_number) << link_capabilities::PORT_NUMBER_SHIFT;
        space.define_u32(offset + LINK_CAPABILITIES, capabilities, 0, 0);

        let mut control_rw = link_control::ASPM_CONTROL_MASK
            | link_control::COMMON_CLOCK
            | link_control::EXTENDED_SYNCH
            | link_control::HW_AUTONOMOUS_WIDTH_DISABLE;
        if link.capabilities & link_capabilities::CLOCK_PM != 0 {
            control_rw |= link_control::CLOCK_PM;
        }
        let bandwidth_notification =
            downstream && link.capabilities & link_capabilities::LINK_BANDWIDTH_NOTIFICATION != 0;
        if downstream {
            control_rw |= link_control::LINK_DISABLE;
        }
        if bandwidth_notification {
            control_rw |= link_control::BANDWIDTH_MANAGEMENT_INTERRUPT
                | link_control::AUTONOMOUS_BANDWIDTH_INTERRUPT;
        }
        space.define_u16(offset + LINK_CONTROL, 0, control_rw, 0);

        let status = u16::from(link.current_speed) & link_status::CURRENT_SPEED_MASK
            | (u16::from(link.negotiated_width) << link_status::NEGOTIATED_WIDTH_SHIFT)
                & link_status::NEGOTIATED_WIDTH_MASK;
        let status_rw1c = if bandwidth_notification {
            link_status::BANDWIDTH_MANAGEMENT_STATUS | link_status::AUTONOMOUS_BANDWIDTH_STATUS
        } else {
            0
        };
        space.define_u16(offset + LINK_STATUS, status, 0, status_rw1c);

        space.define_u32(
            offset + LINK_CAPABILITIES_2,
            link_speed::supported_vector_up_to(link.max_speed),
            0,
            0,
        );
        space.define_u16(
            offset + LINK_CONTROL_2,
            u16::from(link.max_speed) & link_control_2::TARGET_SPEED_MASK,
            link_control_2::TARGET_SPEED_MASK | link_control_2::HW_AUTONOMOUS_SPEED_DISABLE,
            0,
        );
        space.define_u16(offset + LINK_STATUS_2, 0, 0, 0);
    }
}

impl Capability for PcieCapability {
    const ID: u8 = cap_id::PCI_EXPRESS;

    fn size_bytes(&self) -> u16 {
        SIZE
    }

    /// Lays the structure out. Call [`PcieCapability::validate`] first: an
    /// invalid slot is left out and an invalid MPS encoding is clamped.
    fn install(&self, space: &mut ConfigSpace, offset: u16) {
        let slot = if self.port_type.is_downstream() {
            self.slot
        } else {
            None
        };
        let mut capabilities_register = VERSION
            | (self.port_type as u16) << capabilities::PORT_TYPE_SHIFT
            | (u16::from(self.interrupt_message_number)
                << capabilities::INTERRUPT_MESSAGE_NUMBER_SHIFT)
                & capabilities::INTERRUPT_MESSAGE_NUMBER_MASK;
        if slot.is_some() {
            capabilities_register |= capabilities::SLOT_IMPLEMENTED;
        }
        space.define_u16(offset + CAPABILITIES, capabilities_register, 0, 0);

        let device_capabilities = (self.device_capabilities
            & !device_capabilities::MAX_PAYLOAD_SUPPORTED_MASK)
            | u32::from(self.max_payload_supported.min(5));
        space.define_u32(offset + DEVICE_CAPABILITIES, device_capabilities, 0, 0);
        let mut control_rw =
            0x01ff | device_control::NO_SNOOP | device_control::MAX_READ_REQUEST_MASK;
        if device_capabilities & device_capabilities::PHANTOM_FUNCTIONS_MASK != 0 {
            control_rw |= device_control::PHANTOM_FUNCTIONS;
        }
        if self.port_type == PortType::PcieToPciBridge {
            control_rw |= device_control::INITIATE_FLR;
        }
        space.define_u16(
            offset + DEVICE_CONTROL,
            device_control::RESET_VALUE,
            control_rw,
            0,
        );
        space.define_u16(offset + DEVICE_STATUS, 0, 0, device_status::RW1C_BITS);

        for register in (LINK_CAPABILITIES..SIZE).step_by(2) {
            space.define_u16(offset + register, 0, 0, 0);
        }
        if let (true, Some(link)) = (self.port_type.has_link(), self.link.as_ref()) {
            self.install_link(space, offset, link);
        }
        if let Some(slot) = slot {
            space.define_u32(offset + SLOT_CAPABILITIES, slot.register(), 0, 0);
            space.define_u16(offset + SLOT_CONTROL, 0, slot.control_rw_mask(), 0);
            space.define_u16(offset + SLOT_STATUS, 0, 0, slot_status::EVENTS);
        }
        if self.port_type.has_root_registers() {
            space.define_u16(offset + ROOT_CONTROL, 0, root::CONTROL_RW_BITS, 0);
            space.define_u32(offset + ROOT_STATUS, 0, 0, root::PME_STATUS);
        }

        space.define_u32(
            offset + DEVICE_CAPABILITIES_2,
            self.device_capabilities_2,
            0,
            0,
        );
        let mut control_2_rw = 0;
        if self.device_capabilities_2 & device_capabilities_2::COMPLETION_TIMEOUT_RANGES_MASK != 0 {
            control_2_rw |= device_control_2::COMPLETION_TIMEOUT_VALUE_MASK;
        }
        if self.device_capabilities_2 & device_capabilities_2::COMPLETION_TIMEOUT_DISABLE_SUPPORTED
            != 0
        {
            control_2_rw |= device_control_2::COMPLETION_TIMEOUT_DISABLE;
        }
        if self.device_capabilities_2 & device_capabilities_2::ARI_FORWARDING_SUPPORTED != 0 {
            control_2_rw |= device_control_2::ARI_FORWARDING_ENABLE;
        }
        if self.device_capabilities_2 & device_capabilities_2::TEN_BIT_TAG_REQUESTER != 0 {
            control_2_rw |= device_control_2::TEN_BIT_TAG_REQUESTER_ENABLE;
        }
        space.define_u16(offset + DEVICE_CONTROL_2, 0, control_2_rw, 0);
    }
}

/// The state of a link as Link Status reports it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LinkState {
    /// Current Link Speed ([`link_speed`] encoding).
    pub speed: u8,
    /// Negotiated Link Width in lanes.
    pub width: u8,
    /// Data Link Layer Link Active.
    pub dll_link_active: bool,
    /// Link Training in progress.
    pub training: bool,
}

/// A PCI Express capability found in a space: typed access to its fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PcieCap {
    /// Offset of the capability header.
    pub offset: u16,
}

impl PcieCap {
    /// The capability at `offset` (as returned by a list push or a walk).
    pub const fn at(offset: u16) -> Self {
        PcieCap { offset }
    }

    /// Finds the capability in a space; `Ok(None)` if it has none.
    pub fn find(space: &ConfigSpace) -> Result<Option<Self>, WalkError<Infallible>> {
        Ok(find_capability(space, cap_id::PCI_EXPRESS)?.map(Self::at))
    }

    /// The Device/Port Type; `None` for a reserved encoding.
    pub fn port_type(self, space: &impl ConfigRegisters) -> Option<PortType> {
        let register = space.read_u16(self.offset + CAPABILITIES);
        PortType::from_bits(
            ((register & capabilities::PORT_TYPE_MASK) >> capabilities::PORT_TYPE_SHIFT) as u8,
        )
    }

    /// The Capability Version.
    pub fn version(self, space: &impl ConfigRegisters) -> u8 {
        (space.read_u16(self.offset + CAPABILITIES) & capabilities::VERSION_MASK) as u8
    }

    /// Whether the port has a slot (Slot Implemented).
    pub fn slot_implemented(self, space: &impl ConfigRegisters) -> bool {
        space.read_u16(self.offset + CAPABILITIES) & capabilities::SLOT_IMPLEMENTED != 0
    }

    /// The Max_Payload_Size Supported encoding.
    pub fn max_payload_supported(self, space: &impl ConfigRegisters) -> u8 {
        (space.read(self.offset + DEVICE_CAPABILITIES)
            & device_capabilities::MAX_PAYLOAD_SUPPORTED_MASK) as u8
    }

    /// The Max_Payload_Size encoding software programmed in Device Control.
    pub fn max_payload_size(self, space: &impl ConfigRegisters) -> u8 {
        ((space.read_u16(self.offset + DEVICE_CONTROL) & device_control::MAX_PAYLOAD_MASK)
            >> device_control::MAX_PAYLOAD_SHIFT) as u8
    }

    /// The Max_Read_Request_Size encoding software programmed.
    pub fn max_read_request_size(self, space: &impl ConfigRegisters) -> u8 {
        ((space.read_u16(self.offset + DEVICE_CONTROL) & device_control::MAX_READ_REQUEST_MASK)
            >> device_control::MAX_READ_REQUEST_SHIFT) as u8
    }

    /// Link Status decoded.
    pub fn link_state(self, space: &impl ConfigRegisters) -> LinkState {
        let status = space.read_u16(self.offset + LINK_STATUS);
        LinkState {
            speed: (status & link_status::CURRENT_SPEED_MASK) as u8,
            width: ((status & link_status::NEGOTIATED_WIDTH_MASK)
                >> link_status::NEGOTIATED_WIDTH_SHIFT) as u8,
            dll_link_active: status & link_status::DLL_LINK_ACTIVE != 0,
            training: status & link_status::LINK_TRAINING != 0,
        }
    }

    /// The port's hardware reports a new link state (the RW1C bandwidth
    /// status bits are kept).
    pub fn set_link_state(self, space: &mut impl ConfigRegisters, state: LinkState) {
        let offset = self.offset + LINK_STATUS;
        let kept = space.read_u16(offset)
            & (link_status::BANDWIDTH_MANAGEMENT_STATUS
                | link_status::AUTONOMOUS_BANDWIDTH_STATUS
                | link_status::SLOT_CLOCK_CONFIGURATION);
        let mut status = kept
            | u16::from(state.speed) & link_status::CURRENT_SPEED_MASK
            | (u16::from(state.width) << link_status::NEGOTIATED_WIDTH_SHIFT)
                & link_status::NEGOTIATED_WIDTH_MASK;
        if state.dll_link_active {
            status |= link_status::DLL_LINK_ACTIVE;
        }
        if state.training {
            status |= link_status::LINK_TRAINING;
        }
        space.set_u16(offset, status);
    }

    /// Slot Capabilities as raw bits (see [`slot_capabilities`]).
    pub fn slot_capabilities(self, space: &impl ConfigRegisters) -> u32 {
        space.read(self.offset + SLOT_CAPABILITIES)
    }

    /// The Physical Slot Number.
    pub fn physical_slot_number(self, space: &impl ConfigRegisters) -> u16 {
        ((self.slot_capabilities(space) & slot_capabilities::PHYSICAL_SLOT_MASK)
            >> slot_capabilities::PHYSICAL_SLOT_SHIFT) as u16
    }

    /// Slot Control as raw bits (see [`slot_control`]).
    pub fn slot_control(self, space: &impl ConfigRegisters) -> u16 {
        space.read_u16(self.offset + SLOT_CONTROL)
    }

    /// Slot Status as raw bits (see [`slot_status`]).
    pub fn slot_status(self, space: &impl ConfigRegisters) -> u16 {
        space.read_u16(self.offset + SLOT_STATUS)
    }

    /// The slot's hardware latches events into Slot Status (RW1C bits;
    /// software clears them by writing 1).
    pub fn raise_slot_events(self, space: &mut impl ConfigRegisters, events: u16) {
        space.set_bits_u16(self.offset + SLOT_STATUS, events & slot_status::EVENTS);
    }

    /// The slot's hardware reports its state: the RO state bits of Slot
    /// Status (see [`slot_status::STATE`]); events are kept.
    pub fn set_slot_state(self, space: &mut impl ConfigRegisters, state: u16) {
        let offset = self.offset + SLOT_STATUS;
        let events = space.read_u16(offset) & !slot_status::STATE;
        space.set_u16(offset, events | (state & slot_status::STATE));
    }

    /// Whether the slot's hot-plug interrupt is asserted: Hot-Plug Interrupt
    /// Enable is set and some latched event has its enable set (§6.7.3.4).
    /// When this goes from false to true the port sends its MSI/MSI-X
    /// (or INTx) message.
    pub fn hot_plug_interrupt_pending(self, space: &impl ConfigRegisters) -> bool {
        let control = self.slot_control(space);
        if control & slot_control::HOT_PLUG_INTERRUPT_ENABLE == 0 {
            return false;
        }
        let status = self.slot_status(space);
        let pairs = [
            (
                slot_status::ATTENTION_BUTTON_PRESSED,
                slot_control::ATTENTION_BUTTON_PRESSED_ENABLE,
            ),
            (
                slot_status::POWER_FAULT_DETECTED,
                slot_control::POWER_FAULT_DETECTED_ENABLE,
            ),
            (
                slot_status::MRL_SENSOR_CHANGED,
                slot_control::MRL_SENSOR_CHANGED_ENABLE,
            ),
            (
                slot_status::PRESENCE_DETECT_CHANGED,
                slot_control::PRESENCE_DETECT_CHANGED_ENABLE,
            ),
            (
                slot_status::COMMAND_COMPLETED,
                slot_control::COMMAND_COMPLETED_INTERRUPT_ENABLE,
            ),
            (
                slot_status::DLL_STATE_CHANGED,
                slot_control::DLL_STATE_CHANGED_ENABLE,
            ),
        ];
        pairs
            .iter()
            .any(|&(event, enable)| status & event != 0 && control & enable != 0)
    }

    /// Whether software enabled ARI Forwarding on this (downstream) port.
    pub fn ari_forwarding_enabled(self, space: &impl ConfigRegisters) -> bool {
        space.read_u16(self.offset + DEVICE_CONTROL_2) & device_control_2::ARI_FORWARDING_ENABLE
            != 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn payload_encodings_run_from_128_to_4096() {
        assert_eq!(payload_bytes_from_encoding(0), Some(128));
        assert_eq!(payload_bytes_from_encoding(2), Some(512));
        assert_eq!(payload_bytes_from_encoding(5), Some(4096));
        assert_eq!(payload_bytes_from_encoding(6), None);
        for encoding in 0..=5 {
            let bytes = payload_bytes_from_encoding(encoding).expect("valid encoding");
            assert_eq!(payload_encoding_from_bytes(bytes), Some(encoding));
        }
        assert_eq!(payload_encoding_from_bytes(64), None);
    }

    #[test]
    fn every_port_type_round_trips_and_reserved_ones_do_not_decode() {
        for bits in 0..16u8 {
            if let Some(port_type) = PortType::from_bits(bits) {
                assert_eq!(port_type as u8, bits);
            }
        }
        assert_eq!(
            PortType::from_bits(0b0110),
            Some(PortType::SwitchDownstream)
        );
        assert_eq!(PortType::from_bits(0b0010), None);
        assert_eq!(PortType::from_bits(0b1011), None);
    }

    fn downstream_port() -> (ConfigSpace, PcieCap) {
        let mut space = ConfigSpace::new();
        let mut capability = PcieCapability::new(PortType::SwitchDownstream);
        capability.link = Some(Link {
            capabilities: link_capabilities::DLL_LINK_ACTIVE_REPORTING
                | link_capabilities::LINK_BANDWIDTH_NOTIFICATION,
            ..Link::trained(link_speed::GT_16, 8, 3)
        });
        capability.slot = Some(Slot::hot_plug(7));
        capability.device_capabilities_2 = device_capabilities_2::ARI_FORWARDING_SUPPORTED;
        capability.validate().expect("valid capability");
        capability.install(&mut space, 0x40);
        (space, PcieCap::at(0x40))
    }

    #[test]
    fn slot_status_events_clear_by_writing_one_and_state_stays() {
        let (mut space, cap) = downstream_port();
        cap.set_slot_state(&mut space, slot_status::PRESENCE_DETECT_STATE);
        cap.raise_slot_events(
            &mut space,
            slot_status::PRESENCE_DETECT_CHANGED | slot_status::DLL_STATE_CHANGED,
        );
        // 0x0148: DLL State Changed (8), Presence Detect State (6), Changed (3).
        assert_eq!(space.read_u16(0x40 + 0x1a), 0x0148);
        // Software clears Presence Detect Changed only; writes to the RO
        // state bits do nothing.
        space.write_u16(0x40 + 0x1a, 0x0008 | 0x00e0);
        assert_eq!(space.read_u16(0x40 + 0x1a), 0x0140);
        space.write_u16(0x40 + 0x1a, 0x0100);
        assert_eq!(space.read_u16(0x40 + 0x1a), 0x0040);
    }

    #[test]
    fn hot_plug_interrupt_follows_enables_and_events() {
        let (mut space, cap) = downstream_port();
        cap.raise_slot_events(&mut space, slot_status::PRESENCE_DETECT_CHANGED);
        assert!(
            !cap.hot_plug_interrupt_pending(&space),
            "Hot-Plug Interrupt Enable clear"
        );
        // Hot-Plug Interrupt Enable (5) + Presence Detect Changed Enable (3).
        space.write_u16(0x40 + 0x18, 0x0028);
        assert!(cap.hot_plug_interrupt_pending(&space));
        space.write_u16(0x40 + 0x1a, slot_status::PRESENCE_DETECT_CHANGED);
        assert!(!cap.hot_plug_interrupt_pending(&space));
    }

    #[test]
    fn slot_control_only_takes_what_the_slot_has() {
        let (mut space, cap) = downstream_port();
        space.write_u16(0x40 + 0x18, 0xffff);
        // The hot-plug slot has no button, power controller, MRL, indicators
        // or interlock and no command completed: only bits 3, 5 and 12.
        assert_eq!(cap.slot_control(&space), 0x1028);
        assert_eq!(cap.physical_slot_number(&space), 7);
    }

    #[test]
    fn device_control_keeps_its_reset_value_and_mps_mrrs_are_readable() {
        let (mut space, cap) = downstream_port();
        // Reset: Relaxed Ordering (4), No Snoop (11), MRRS 010b: 0x2810.
        assert_eq!(space.read_u16(0x48), 0x2810);
        assert_eq!(cap.max_read_request_size(&space), 2);
        // MPS 256 (001b) at bits 7:5, MRRS 4096 (101b) at 14:12.
        space.write_u16(0x48, 0x5020 | 0x8000);
        assert_eq!(cap.max_payload_size(&space), 1);
        assert_eq!(cap.max_read_request_size(&space), 5);
        assert_eq!(space.read_u16(0x48) & 0x8000, 0, "Initiate FLR reads 0");
    }

    #[test]
    fn link_status_reports_hardware_state() {
        let (mut space, cap) = downstream_port();
        assert_eq!(
            cap.link_state(&space),
            LinkState {
                speed: 4,
                width: 8,
                dll_link_active: false,
                training: false
            }
        );
        cap.set_link_state(
            &mut space,
            LinkState {
                speed: 3,
                width: 4,
                dll_link_active: true,
                training: false,
            },
        );
        // Speed 3, width 4 << 4, DLL Link Active (13).
        assert_eq!(space.read_u16(0x40 + 0x12), 0x2043);
        space.write_u16(0x40 + 0x12, 0);
        assert_eq!(space.read_u16(0x40 + 0x12), 0x2043, "Link Status is RO");
        // Bandwidth status bits are RW1C on a downstream port with LBN.
        space.set_bits_u16(0x40 + 0x12, 0xc000);
        space.write_u16(0x40 + 0x12, 0x4000);
        assert_eq!(space.read_u16(0x40 + 0x12), 0xa043);
    }

    #[test]
    fn ari_forwarding_enable_is_writable_where_supported() {
        let (mut space, cap) = downstream_port();
        space.write_u16(0x40 + 0x28, 0xffff);
        assert!(cap.ari_forwarding_enabled(&space));
        assert_eq!(space.read_u16(0x40 + 0x28), 0x0020);
    }

    #[test]
    fn slots_are_refused_on_upstream_ports_and_endpoints() {
        let mut capability = PcieCapability::new(PortType::SwitchUpstream);
        capability.slot = Some(Slot::hot_plug(1));
        assert_eq!(
            capability.validate(),
            Err(PcieCapabilityError::SlotNotAllowed {
                port_type: PortType::SwitchUpstream
            })
        );
    }

    /// §7.5.3.10: a field of Slot Control is writable only where Slot
    /// Capabilities has what it controls; Command Completed Interrupt
    /// Enable only where commands complete (No Command Completed Support
    /// clear).
    #[test]
    fn an_attention_button_slot_lets_software_drive_button_power_and_indicators() {
        let mut space = ConfigSpace::new();
        let mut capability = PcieCapability::new(PortType::SwitchDownstream);
        capability.slot = Some(Slot::attention_button(9));
        capability.install(&mut space, 0x40);
        let pcie = PcieCap::at(0x40);
        let caps = pcie.slot_capabilities(&space);
        assert_eq!(caps & slot_capabilities::NO_COMMAND_COMPLETED, 0);
        assert_eq!(pcie.physical_slot_number(&space), 9);
        space.write(0x40 + SLOT_CONTROL, 0xffff, 0b0011);
        assert_eq!(
            pcie.slot_control(&space),
            slot_control::ATTENTION_BUTTON_PRESSED_ENABLE
                | slot_control::POWER_FAULT_DETECTED_ENABLE
                | slot_control::PRESENCE_DETECT_CHANGED_ENABLE
                | slot_control::COMMAND_COMPLETED_INTERRUPT_ENABLE
                | slot_control::HOT_PLUG_INTERRUPT_ENABLE
                | slot_control::ATTENTION_INDICATOR_MASK
                | slot_control::POWER_INDICATOR_MASK
                | slot_control::POWER_CONTROLLER_OFF
                | slot_control::DLL_STATE_CHANGED_ENABLE
        );
        // 11b is off for both indicators; 10b blinks.
        assert_eq!(Indicator::power(0x0300), Indicator::Off);
        assert_eq!(Indicator::attention(0x00c0), Indicator::Off);
        assert_eq!(Indicator::Blink.set_power(0x0300), 0x0200);
        assert_eq!(Indicator::On.set_attention(0x00c0), 0x0040);
    }
}
