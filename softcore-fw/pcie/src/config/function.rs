//! Builders that lay out a Type 0 (endpoint) or Type 1 (bridge, switch
//! port) header with the right value and write mask for every register
//! (PCIe Base 6.0 §7.5.1), and decoders for the windows a Type 1 header
//! forwards.

use super::bar::{install_bars, install_expansion_rom, Bar, BarError};
use super::header::{
    bridge_control, command, common, header_type, secondary_status, status, type0, type1, window,
};
use super::space::{ConfigRegisters, ConfigSpace};

/// The identity every function reports in its header (§7.5.1.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FunctionIdentity {
    /// Vendor ID (§7.5.1.1.1).
    pub vendor_id: u16,
    /// Device ID (§7.5.1.1.2).
    pub device_id: u16,
    /// Revision ID (§7.5.1.1.5).
    pub revision_id: u8,
    /// Class Code, 24 bits: base class, sub-class, programming interface
    /// (§7.5.1.1.6), e.g. `0x06_04_00` for a PCI-to-PCI bridge.
    pub class_code: u32,
}

/// Class code of a PCI-to-PCI bridge, which every switch port reports.
pub const CLASS_PCI_BRIDGE: u32 = 0x06_04_00;

/// INTx pin a function uses (§7.5.1.1.13).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InterruptPin {
    /// No legacy interrupt.
    None = 0,
    /// INTA.
    IntA = 1,
    /// INTB.
    IntB = 2,
    /// INTC.
    IntC = 3,
    /// INTD.
    IntD = 4,
}

/// Lays out the registers both header types share.
fn install_common(
    space: &mut ConfigSpace,
    identity: &FunctionIdentity,
    layout: u8,
    multi_function: bool,
    interrupt_pin: InterruptPin,
) {
    space.define_u16(common::VENDOR_ID, identity.vendor_id, 0, 0);
    space.define_u16(common::DEVICE_ID, identity.device_id, 0, 0);
    // Memory and I/O decode and Bus Master are off after reset (§7.5.1.1.3).
    space.define_u16(common::COMMAND, 0, command::RW_BITS, 0);
    // Capabilities List is hardwired 1 for PCIe functions, which always have
    // at least the PCI Express capability (§7.5.1.1.4).
    space.define_u16(
        common::STATUS,
        status::CAPABILITIES_LIST,
        0,
        status::RW1C_BITS,
    );
    space.define_u8(common::REVISION_ID, identity.revision_id, 0, 0);
    space.define_u8(common::PROG_IF, identity.class_code as u8, 0, 0);
    space.define_u8(common::SUB_CLASS, (identity.class_code >> 8) as u8, 0, 0);
    space.define_u8(common::BASE_CLASS, (identity.class_code >> 16) as u8, 0, 0);
    space.define_u8(common::CACHE_LINE_SIZE, 0, 0xff, 0);
    space.define_u8(common::LATENCY_TIMER, 0, 0, 0);
    let multi = if multi_function {
        header_type::MULTI_FUNCTION
    } else {
        0
    };
    space.define_u8(common::HEADER_TYPE, layout | multi, 0, 0);
    space.define_u8(common::BIST, 0, 0, 0);
    space.define_u8(common::CAPABILITIES_POINTER, 0, 0, 0);
    space.define_u8(common::INTERRUPT_LINE, 0, 0xff, 0);
    space.define_u8(common::INTERRUPT_PIN, interrupt_pin as u8, 0, 0);
}

/// A Type 0 (endpoint) function's header (§7.5.1.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Type0Function {
    /// Vendor, device, revision and class.
    pub identity: FunctionIdentity,
    /// Subsystem Vendor ID (§7.5.1.2.3).
    pub subsystem_vendor_id: u16,
    /// Subsystem ID (§7.5.1.2.3).
    pub subsystem_id: u16,
    /// The six BARs; a 64-bit BAR leaves the next slot `None`.
    pub bars: [Option<Bar>; 6],
    /// Expansion ROM size in bytes, if the function has one.
    pub expansion_rom: Option<u32>,
    /// Header Type bit 7: the device has several functions.
    pub multi_function: bool,
    /// The INTx pin the function uses.
    pub interrupt_pin: InterruptPin,
}

impl Type0Function {
    /// A single-function endpoint with no BARs, ROM or INTx.
    pub const fn new(identity: FunctionIdentity) -> Self {
        Type0Function {
            identity,
            subsystem_vendor_id: 0,
            subsystem_id: 0,
            bars: [None; 6],
            expansion_rom: None,
            multi_function: false,
            interrupt_pin: InterruptPin::None,
        }
    }

    /// Lays the header out in `space`, leaving the rest of the space alone.
    pub fn install(&self, space: &mut ConfigSpace) -> Result<(), BarError> {
        install_bars(space, type0::BAR0, type0::BAR_COUNT, &self.bars)?;
        install_expansion_rom(space, type0::EXPANSION_ROM_BASE, self.expansion_rom)?;
        install_common(
            space,
            &self.identity,
            header_type::TYPE0,
            self.multi_function,
            self.interrupt_pin,
        );
        space.define_u32(type0::CARDBUS_CIS_POINTER, 0, 0, 0);
        space.define_u16(type0::SUBSYSTEM_VENDOR_ID, self.subsystem_vendor_id, 0, 0);
        space.define_u16(type0::SUBSYSTEM_ID, self.subsystem_id, 0, 0);
        space.define_u8(type0::MIN_GNT, 0, 0, 0);
        space.define_u8(type0::MAX_LAT, 0, 0, 0);
        Ok(())
    }

    /// A fresh space holding only this header.
    pub fn build(&self) -> Result<ConfigSpace, BarError> {
        let mut space = ConfigSpace::new();
        self.install(&mut space)?;
        Ok(space)
    }
}

/// Whether a bridge forwards I/O, and with which address width (§7.5.1.3.6).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IoWindow {
    /// No I/O window: I/O Base and Limit are read-only zero.
    None,
    /// 16-bit I/O addresses; the upper registers are read-only zero.
    Decode16,
    /// 32-bit I/O addresses with the upper 16-bit registers.
    Decode32,
}

/// Whether a bridge forwards prefetchable memory, and how wide (§7.5.1.3.9).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PrefetchableWindow {
    /// No prefetchable window: the registers are read-only zero.
    None,
    /// A window below 4 GiB.
    Decode32,
    /// A 64-bit window with the upper 32-bit registers.
    Decode64,
}

/// A Type 1 function's header: a root port, a switch port or a bridge (§7.5.1.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Type1Function {
    /// Vendor, device, revision and class (normally [`CLASS_PCI_BRIDGE`]).
    pub identity: FunctionIdentity,
    /// The two BARs; switch ports usually have none.
    pub bars: [Option<Bar>; 2],
    /// The I/O window the bridge implements.
    pub io_window: IoWindow,
    /// The prefetchable memory window the bridge implements.
    pub prefetchable_window: PrefetchableWindow,
    /// Expansion ROM size in bytes, if any.
    pub expansion_rom: Option<u32>,
    /// Header Type bit 7.
    pub multi_function: bool,
    /// The INTx pin the bridge itself uses.
    pub interrupt_pin: InterruptPin,
}

impl Type1Function {
    /// A switch port as Linux expects one: no BARs, 32-bit I/O and 64-bit
    /// prefetchable windows, no ROM, no INTx.
    pub const fn switch_port(identity: FunctionIdentity) -> Self {
        Type1Function {
            identity,
            bars: [None; 2],
            io_window: IoWindow::Decode32,
            prefetchable_window: PrefetchableWindow::Decode64,
            expansion_rom: None,
            multi_function: false,
            interrupt_pin: InterruptPin::None,
        }
    }

    /// Lays the header out in `space`, leaving the rest of the space alone.
    pub fn install(&self, space: &mut ConfigSpace) -> Result<(), BarError> {
        install_bars(space, type1::BAR0, type1::BAR_COUNT, &self.bars)?;
        install_expansion_rom(space, type1::EXPANSION_ROM_BASE, self.expansion_rom)?;
        install_common(
            space,
            &self.identity,
            header_type::TYPE1,
            self.multi_function,
            self.interrupt_pin,
        );
        // Bus numbers are RW and 0 after reset (§7.5.1.3.2-4).
        space.define_u8(type1::PRIMARY_BUS, 0, 0xff, 0);
        space.define_u8(type1::SECONDARY_BUS, 0, 0xff, 0);
        space.define_u8(type1::SUBORDINATE_BUS, 0, 0xff, 0);
        space.define_u8(type1::SECONDARY_LATENCY_TIMER, 0, 0, 0);

        let (io_flags, io_rw, io_upper_rw) = match self.io_window {
            IoWindow::None => (0, 0, 0),
            IoWindow::Decode16 => (window::IO_DECODE_16, window::IO_ADDRESS_MASK, 0),
            IoWindow::Decode32 => (window::IO_DECODE_32, window::IO_ADDRESS_MASK, 0xffff),
        };
        space.define_u8(type1::IO_BASE, io_flags, io_rw, 0);
        space.define_u8(type1::IO_LIMIT, io_flags, io_rw, 0);
        space.define_u16(type1::IO_BASE_UPPER, 0, io_upper_rw, 0);
        space.define_u16(type1::IO_LIMIT_UPPER, 0, io_upper_rw, 0);

        space.define_u16(type1::SECONDARY_STATUS, 0, 0, secondary_status::RW1C_BITS);
        space.define_u16(type1::MEMORY_BASE, 0, window::MEMORY_ADDRESS_MASK, 0);
        space.define_u16(type1::MEMORY_LIMIT, 0, window::MEMORY_ADDRESS_MASK, 0);

        let (pf_flags, pf_rw, pf_upper_rw) = match self.prefetchable_window {
            PrefetchableWindow::None => (0, 0, 0),
            PrefetchableWindow::Decode32 => (
                window::PREFETCHABLE_DECODE_32,
                window::MEMORY_ADDRESS_MASK,
                0,
            ),
            PrefetchableWindow::Decode64 => (
                window::PREFETCHABLE_DECODE_64,
                window::MEMORY_ADDRESS_MASK,
                u32::MAX,
            ),
        };
        space.define_u16(type1::PREFETCHABLE_BASE, pf_flags, pf_rw, 0);
        space.define_u16(type1::PREFETCHABLE_LIMIT, pf_flags, pf_rw, 0);
        space.define_u32(type1::PREFETCHABLE_BASE_UPPER, 0, pf_upper_rw, 0);
        space.define_u32(type1::PREFETCHABLE_LIMIT_UPPER, 0, pf_upper_rw, 0);

        space.define_u16(type1::BRIDGE_CONTROL, 0, bridge_control::RW_BITS, 0);
        Ok(())
    }

    /// A fresh space holding only this header.
    pub fn build(&self) -> Result<ConfigSpace, BarError> {
        let mut space = ConfigSpace::new();
        self.install(&mut space)?;
        Ok(space)
    }
}

/// The bus numbers a Type 1 function forwards (§7.5.1.3.2-4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BusNumbers {
    /// The bus the bridge's primary side is on.
    pub primary: u8,
    /// The bus directly behind the bridge.
    pub secondary: u8,
    /// The highest bus behind the bridge.
    pub subordinate: u8,
}

impl BusNumbers {
    /// Reads the bus number registers of a Type 1 header.
    pub fn read(space: &impl ConfigRegisters) -> Self {
        BusNumbers {
            primary: space.read_u8(type1::PRIMARY_BUS),
            secondary: space.read_u8(type1::SECONDARY_BUS),
            subordinate: space.read_u8(type1::SUBORDINATE_BUS),
        }
    }

    /// Whether a Type 1 Configuration Request for `bus` goes through the
    /// bridge: buses secondary..=subordinate (§7.5.1.3.3-4).
    pub const fn forwards(&self, bus: u8) -> bool {
        self.secondary != 0 && bus >= self.secondary && bus <= self.subordinate
    }
}

/// An inclusive address range a bridge forwards; `None` from the readers
/// below when the limit is below the base, which disables the window.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Window {
    /// First address forwarded.
    pub base: u64,
    /// Last address forwarded.
    pub limit: u64,
}

impl Window {
    /// Whether `address` falls inside the window.
    pub const fn contains(&self, address: u64) -> bool {
        address >= self.base && address <= self.limit
    }

    const fn from_bounds(base: u64, limit: u64) -> Option<Self> {
        if limit < base {
            None
        } else {
            Some(Window { base, limit })
        }
    }
}

/// The non-prefetchable memory window: Memory Base/Limit hold address bits
/// 31:20, the base's low 20 bits are 0 and the limit's are all ones (§7.5.1.3.8).
pub const fn memory_window(space: &ConfigSpace) -> Option<Window> {
    let base = (space.read_u16(type1::MEMORY_BASE) & window::MEMORY_ADDRESS_MASK) as u64;
    let limit = (space.read_u16(type1::MEMORY_LIMIT) & window::MEMORY_ADDRESS_MASK) as u64;
    Window::from_bounds(base << 16, (limit << 16) | 0xf_ffff)
}

/// The prefetchable memory window, including the upper 32 bits when the
/// window is 64-bit (§7.5.1.3.9, §7.5.1.3.10).
pub const fn prefetchable_window(space: &ConfigSpace) -> Option<Window> {
    let base_reg = space.read_u16(type1::PREFETCHABLE_BASE);
    let limit_reg = space.read_u16(type1::PREFETCHABLE_LIMIT);
    let mut base = ((base_reg & window::MEMORY_ADDRESS_MASK) as u64) << 16;
    let mut limit = (((limit_reg & window::MEMORY_ADDRESS_MASK) as u64) << 16) | 0xf_ffff;
    if base_reg & window::MEMORY_CAPABILITY_MASK == window::PREFETCHABLE_DECODE_64 {
        base |= (space.read_u32(type1::PREFETCHABLE_BASE_UPPER) as u64) << 32;
        limit |= (space.read_u32(type1::PREFETCHABLE_LIMIT_UPPER) as u64) << 32;
    }
    Window::from_bounds(base, limit)
}

/// The I/O window: I/O Base/Limit hold address bits 15:12, and the upper
/// registers bits 31:16 when the bridge decodes 32-bit I/O (§7.5.1.3.6,
/// §7.5.1.3.11). `None` if the bridge has no I/O window or it is disabled.
pub const fn io_window(space: &ConfigSpace) -> Option<Window> {
    let base_reg = space.read_u8(type1::IO_BASE);
    let limit_reg = space.read_u8(type1::IO_LIMIT);
    let mut base = ((base_reg & window::IO_ADDRESS_MASK) as u64) << 8;
    let mut limit = (((limit_reg & window::IO_ADDRESS_MASK) as u64) << 8) | 0xfff;
    if base_reg & window::IO_CAPABILITY_MASK == window::IO_DECODE_32 {
        base |= (space.read_u16(type1::IO_BASE_UPPER) as u64) << 16;
        limit |= (space.read_u16(type1::IO_LIMIT_UPPER) as u64) << 16;
    }
    Window::from_bounds(base, limit)
}

#[cfg(test)]
mod tests {
    use super::*;

    const IDENTITY: FunctionIdentity = FunctionIdentity {
        vendor_id: 0x1af4,
        device_id: 0x1234,
        revision_id: 0x02,
        class_code: 0x01_08_02,
    };

    #[test]
    fn type0_header_bytes_sit_at_spec_offsets() {
        let mut function = Type0Function::new(IDENTITY);
        function.subsystem_vendor_id = 0x1af4;
        function.subsystem_id = 0x0001;
        function.interrupt_pin = InterruptPin::IntA;
        function.bars[0] = Some(Bar::memory64(16 << 10, false));
        let space = function.build().expect("valid header");
        let bytes = space.to_bytes();
        assert_eq!(&bytes[0x00..0x04], &[0xf4, 0x1a, 0x34, 0x12]);
        // Command 0, Status with Capabilities List (bit 4).
        assert_eq!(&bytes[0x04..0x08], &[0x00, 0x00, 0x10, 0x00]);
        // Revision, prog-if 02, sub-class 08, base class 01 (NVMe).
        assert_eq!(&bytes[0x08..0x0c], &[0x02, 0x02, 0x08, 0x01]);
        assert_eq!(bytes[0x0e], 0x00);
        // BAR0: 64-bit non-prefetchable = type bits 0x4.
        assert_eq!(&bytes[0x10..0x14], &[0x04, 0, 0, 0]);
        assert_eq!(&bytes[0x2c..0x30], &[0xf4, 0x1a, 0x01, 0x00]);
        assert_eq!(bytes[0x3d], 0x01);
    }

    #[test]
    fn type0_write_semantics_per_register() {
        let mut space = Type0Function::new(IDENTITY).build().expect("valid header");
        space.write_u32(0x00, 0xffff_ffff);
        assert_eq!(space.read(0x00), 0x1234_1af4, "IDs are read-only");
        // Command takes its RW bits only; Status ignores the write of 0s.
        space.write(0x04, 0x0000_ffff, 0b0011);
        assert_eq!(space.read_u16(0x04), 0x0547);
        // Interrupt Line RW, Pin RO.
        space.write_u16(0x3c, 0xff0b);
        assert_eq!(space.read_u16(0x3c), 0x000b);
        space.write_u8(0x0c, 0x10);
        assert_eq!(space.read_u8(0x0c), 0x10, "Cache Line Size is RW");
        space.write_u8(0x0d, 0x40);
        assert_eq!(space.read_u8(0x0d), 0, "Latency Timer is hardwired 0");
    }

    #[test]
    fn status_error_bits_clear_by_writing_one() {
        let mut space = Type0Function::new(IDENTITY).build().expect("valid header");
        // Received Master Abort (13) and Signaled Target Abort (11) latch.
        space.set_bits_u16(0x06, 0x2800);
        space.write_u16(0x06, 0x2000);
        assert_eq!(space.read_u16(0x06), 0x0810);
    }

    #[test]
    fn type1_header_windows_and_bus_numbers() {
        let identity = FunctionIdentity {
            class_code: CLASS_PCI_BRIDGE,
            ..IDENTITY
        };
        let mut space = Type1Function::switch_port(identity)
            .build()
            .expect("valid header");
        assert_eq!(space.read_u8(0x0e), 0x01);
        // Bus numbers: primary 1, secondary 2, subordinate 5.
        space.write_u32(0x18, 0xff05_0201);
        assert_eq!(
            space.read(0x18),
            0x0005_0201,
            "secondary latency timer stays 0"
        );
        assert!(BusNumbers::read(&space).forwards(4));
        assert!(!BusNumbers::read(&space).forwards(6));
        // Memory window 0xc000_0000..=0xc01f_ffff.
        space.write_u32(0x20, 0xc010_c000 | 0x000f_000f);
        assert_eq!(space.read(0x20), 0xc010_c000, "low 4 bits are RO 0");
        assert_eq!(
            memory_window(&space),
            Some(Window {
                base: 0xc000_0000,
                limit: 0xc01f_ffff
            })
        );
        // Prefetchable reads back 0x1 in its low bits: 64-bit.
        assert_eq!(space.read(0x24), 0x0001_0001);
        space.write_u32(0x24, 0x0030_0010);
        space.write_u32(0x28, 0x0000_0040);
        space.write_u32(0x2c, 0x0000_0040);
        assert_eq!(
            prefetchable_window(&space),
            Some(Window {
                base: 0x40_0010_0000,
                limit: 0x40_003f_ffff
            })
        );
        // I/O: 32-bit decode flag 0x1 stays.
        space.write_u16(0x1c, 0x2010);
        space.write_u32(0x30, 0x0001_0001);
        assert_eq!(space.read_u16(0x1c), 0x2111);
        assert_eq!(
            io_window(&space),
            Some(Window {
                base: 0x1_1000,
                limit: 0x1_2fff
            })
        );
        // Bridge control: Secondary Bus Reset RW, Master Abort Mode RO.
        space.write_u16(0x3e, 0x0060);
        assert_eq!(space.read_u16(0x3e), 0x0040);
        // Secondary Status error bits are RW1C.
        space.set_bits_u16(0x1e, 0x4000);
        space.write(0x1c, 0x4000_0000, 0b1000);
        assert_eq!(space.read_u16(0x1e), 0);
    }

    #[test]
    fn a_bridge_without_windows_decodes_none() {
        let mut function = Type1Function::switch_port(FunctionIdentity {
            class_code: CLASS_PCI_BRIDGE,
            ..IDENTITY
        });
        function.io_window = IoWindow::None;
        function.prefetchable_window = PrefetchableWindow::None;
        let mut space = function.build().expect("valid header");
        space.write_u32(0x1c, 0xffff_ffff);
        space.write_u32(0x24, 0xffff_ffff);
        assert_eq!(space.read_u16(0x1c), 0);
        assert_eq!(space.read(0x24), 0);
        // A memory window whose limit is below its base forwards nothing.
        space.write_u32(0x20, 0x0000_0010);
        assert_eq!(memory_window(&space), None);
    }

    #[test]
    fn sizing_header_bars_restores_command_and_keeps_status_errors() {
        use crate::config::bar::size_header_bars;
        let mut function = Type0Function::new(IDENTITY);
        function.bars[2] = Some(Bar::memory64(1 << 30, true));
        let mut space = function.build().expect("valid header");
        space.write_u16(0x04, command::MEMORY_SPACE | command::BUS_MASTER);
        space.set_bits_u16(0x06, status::RECEIVED_MASTER_ABORT);
        let found = size_header_bars(&mut space).expect("sizable");
        assert_eq!(found[2].map(|b| b.bar), Some(Bar::memory64(1 << 30, true)));
        assert_eq!(found.iter().flatten().count(), 1);
        assert_eq!(space.read_u16(0x04), 0x0006, "Command restored");
        assert_eq!(space.read_u16(0x06), 0x2010, "Status error bit not cleared");
    }
}
