//! Devices described by an `lspci -xxxx` dump plus their BAR sizes, so
//! users can model the device they own.
//!
//! - [`parse`](mod@parse): the dump's text format.
//! - [`masks`]: write masks and reset values for the dumped registers.
//! - [`DumpDevice`]: a [`Device`] answering configuration requests from the
//!   dump with those semantics, and backing its memory BARs with RAM.
//!
//! A dump does not say how big a BAR is (lspci prints the sizes it learnt
//! by sizing, not the registers' masks), so the sizes are given beside it,
//! one list per function, indexed by BAR slot.

pub mod masks;
pub mod parse;

use std::fmt;
use std::time::Duration;

use weft_pcie::config::bar::{BarError, MAX_BARS};
use weft_pcie::config::header::type0;
use weft_pcie::config::pcie_cap::PcieCap;
use weft_pcie::config::{Bar, BarKind, ConfigSpace};
use weft_pcie::split::PayloadSize;
use weft_pcie::Bdf;

use crate::bars::{find, header_windows};
use crate::device::{BusCapture, Claim, ConfigError, Device, Readiness};
use crate::memory::SparseMemory;
use crate::packet::Packet;
pub use parse::{parse, DumpError, DumpedFunction};

/// Sizes of one function's BARs in bytes, by slot (the upper slot of a
/// 64-bit BAR is `None`).
pub type BarSizes = [Option<u64>; MAX_BARS];

/// Why a device could not be built from a dump.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DumpDeviceError {
    /// The text is not a valid dump.
    Parse(DumpError),
    /// Sizes were given for a different number of functions than the dump holds.
    SizeListCount {
        /// Functions in the dump.
        functions: usize,
        /// Size lists given.
        size_lists: usize,
    },
    /// A size given for a BAR register that holds the upper half of the
    /// 64-bit BAR below it.
    SizeForUpperHalf {
        /// The function.
        function: Bdf,
        /// The slot.
        slot: u8,
    },
    /// The sizes do not make a valid BAR layout.
    Bar {
        /// The function.
        function: Bdf,
        /// What is wrong.
        error: BarError,
    },
    /// Two functions with the same address.
    DuplicateFunction {
        /// The address.
        function: Bdf,
    },
}

impl fmt::Display for DumpDeviceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DumpDeviceError::Parse(error) => error.fmt(f),
            DumpDeviceError::SizeListCount {
                functions,
                size_lists,
            } => write!(
                f,
                "the dump has {functions} functions but {size_lists} BAR size lists were given; give one per function"
            ),
            DumpDeviceError::SizeForUpperHalf { function, slot } => write!(
                f,
                "{function}: BAR{slot} is the upper half of a 64-bit BAR; give its size on the BAR below"
            ),
            DumpDeviceError::Bar { function, error } => {
                write!(f, "{function}: the BAR sizes are not a valid layout: {error:?}")
            }
            DumpDeviceError::DuplicateFunction { function } => {
                write!(f, "{function} appears twice in the dump")
            }
        }
    }
}

impl std::error::Error for DumpDeviceError {}

impl From<DumpError> for DumpDeviceError {
    fn from(error: DumpError) -> Self {
        DumpDeviceError::Parse(error)
    }
}

/// One function of a dumped device.
#[derive(Clone, Debug)]
struct Function {
    /// Function number (ARI numbering: device × 8 + function).
    number: u8,
    bars: [Option<Bar>; MAX_BARS],
    reset_space: ConfigSpace,
    space: ConfigSpace,
    memory: Vec<SparseMemory>,
}

/// A device whose functions answer from dumps.
#[derive(Clone, Debug)]
pub struct DumpDevice {
    functions: Vec<Function>,
    bus: BusCapture,
    readiness: Readiness,
    boot_time: Duration,
}

/// Reads the BAR layout of a dumped header from its registers and `sizes`.
fn bars_of(
    dumped: &DumpedFunction,
    sizes: &BarSizes,
) -> Result<[Option<Bar>; MAX_BARS], DumpDeviceError> {
    let mut bars = [None; MAX_BARS];
    let mut upper = false;
    for slot in 0..MAX_BARS {
        let at = usize::from(type0::BAR0) + 4 * slot;
        let register = u32::from_le_bytes([
            dumped.bytes[at],
            dumped.bytes[at + 1],
            dumped.bytes[at + 2],
            dumped.bytes[at + 3],
        ]);
        let size = sizes[slot];
        if upper {
            upper = false;
            if size.is_some() {
                return Err(DumpDeviceError::SizeForUpperHalf {
                    function: dumped.address,
                    slot: slot as u8,
                });
            }
            continue;
        }
        if let Some(size) = size {
            let bar = masks::bar_from_register(register, size);
            upper = matches!(bar.kind, BarKind::Memory64 { .. });
            bars[slot] = Some(bar);
        }
    }
    Ok(bars)
}

impl DumpDevice {
    /// A device from `lspci -xxxx` text and one BAR size list per function,
    /// in the order the dump lists them.
    pub fn from_text(text: &str, sizes: &[BarSizes]) -> Result<Self, DumpDeviceError> {
        let functions = parse(text)?;
        if functions.len() != sizes.len() {
            return Err(DumpDeviceError::SizeListCount {
                functions: functions.len(),
                size_lists: sizes.len(),
            });
        }
        Self::new(functions.iter().zip(sizes.iter().copied()))
    }

    /// A device from parsed functions and their BAR sizes.
    pub fn new<'a>(
        functions: impl IntoIterator<Item = (&'a DumpedFunction, BarSizes)>,
    ) -> Result<Self, DumpDeviceError> {
        let mut built: Vec<Function> = Vec::new();
        for (dumped, sizes) in functions {
            let bars = bars_of(dumped, &sizes)?;
            let mut space = masks::read_only_space(&dumped.bytes);
            masks::apply_header(&mut space, &bars).map_err(|error| DumpDeviceError::Bar {
                function: dumped.address,
                error,
            })?;
            masks::apply_capabilities(&mut space);
            let number = dumped.address.ari_function();
            if built.iter().any(|f| f.number == number) {
                return Err(DumpDeviceError::DuplicateFunction {
                    function: dumped.address,
                });
            }
            let memory = bars
                .iter()
                .map(|bar| SparseMemory::with_size(bar.map_or(0, |b| b.size)))
                .collect();
            built.push(Function {
                number,
                bars,
                reset_space: space.clone(),
                space,
                memory,
            });
        }
        Ok(DumpDevice {
            functions: built,
            bus: BusCapture::default(),
            readiness: Readiness::new(Duration::ZERO, Duration::ZERO),
            boot_time: Duration::ZERO,
        })
    }

    /// Sets how long the device answers with Request Retry Status after a
    /// reset (§6.6.1), starting now at time zero.
    pub fn with_boot_time(mut self, boot_time: Duration) -> Self {
        self.boot_time = boot_time;
        self.readiness = Readiness::new(self.readiness.reset_at, boot_time);
        self
    }

    /// The configuration space of function `number`.
    pub fn config_space(&self, number: u8) -> Option<&ConfigSpace> {
        self.functions
            .iter()
            .find(|f| f.number == number)
            .map(|f| &f.space)
    }

    fn function_mut(&mut self, target: Bdf) -> Option<&mut Function> {
        let number = self.bus.index(target).filter(|&i| i < 256)? as u8;
        self.functions.iter_mut().find(|f| f.number == number)
    }

    fn hit(&self, address: u64) -> Option<(usize, u8, u64)> {
        self.functions.iter().enumerate().find_map(|(index, f)| {
            let windows = header_windows(&f.space, &f.bars);
            find(&windows, address).map(|(window, offset)| (index, window.slot, offset))
        })
    }
}

impl Device for DumpDevice {
    fn config_read(&mut self, now: Duration, target: Bdf, offset: u16) -> Result<u32, ConfigError> {
        self.readiness.check(now, target)?;
        let function = self
            .function_mut(target)
            .ok_or(ConfigError::UnsupportedRequest { target })?;
        Ok(function.space.read(offset))
    }

    fn config_write(
        &mut self,
        now: Duration,
        target: Bdf,
        offset: u16,
        value: u32,
        byte_enables: u8,
    ) -> Result<(), ConfigError> {
        self.readiness.check(now, target)?;
        let function = self
            .function_mut(target)
            .ok_or(ConfigError::UnsupportedRequest { target })?;
        function.space.write(offset, value, byte_enables);
        self.bus.capture(target);
        Ok(())
    }

    fn claim(&self, address: u64) -> Option<Claim> {
        let (index, _, _) = self.hit(address)?;
        let function = &self.functions[index];
        let max_payload = weft_pcie::config::walk::find_capability(
            &function.space,
            weft_pcie::config::cap_id::PCI_EXPRESS,
        )
        .ok()
        .flatten()
        .and_then(|at| {
            PayloadSize::from_encoding(PcieCap::at(at).max_payload_size(&function.space)).ok()
        })
        .unwrap_or(PayloadSize::B128);
        Some(Claim {
            function: Bdf(self.bus.base(Bdf(0)).0 + u16::from(function.number)),
            max_payload,
        })
    }

    fn memory_read(&mut self, _now: Duration, address: u64, out: &mut [u8]) {
        match self.hit(address) {
            Some((index, slot, offset)) => {
                self.functions[index].memory[usize::from(slot)].read_into(offset, out)
            }
            None => out.fill(0),
        }
    }

    fn memory_write(&mut self, _now: Duration, address: u64, data: &[u8]) {
        if let Some((index, slot, offset)) = self.hit(address) {
            self.functions[index].memory[usize::from(slot)].write(offset, data);
        }
    }

    fn receive_completion(&mut self, _now: Duration, _completion: &Packet) {}

    fn poll(&mut self, _now: Duration) -> Vec<Packet> {
        Vec::new()
    }

    fn owns(&self, id: Bdf) -> bool {
        self.bus.bus().is_some()
            && self
                .bus
                .index(id)
                .is_some_and(|i| self.functions.iter().any(|f| u16::from(f.number) == i))
    }

    fn reset(&mut self, now: Duration) {
        for function in &mut self.functions {
            function.space = function.reset_space.clone();
        }
        self.bus.clear();
        self.readiness = Readiness::new(now, self.boot_time);
    }

    fn completer_for_unclaimed(&self) -> Bdf {
        self.bus.base(Bdf(0))
    }
}
