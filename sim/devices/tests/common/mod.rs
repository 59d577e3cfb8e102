//! What an operating system does to a function before its driver runs,
//! written against the test bench: configuration access, BAR sizing and
//! placement, MSI setup.
#![allow(dead_code)]

use weft_devices::bench::Bench;
use weft_devices::pcie::config::bar::{size_header_bars, DecodedBar, MAX_BARS};
use weft_devices::pcie::config::{ConfigRead, ConfigWrite};
use weft_devices::pcie::tlp::CompletionStatus;
use weft_devices::pcie::Bdf;
use weft_devices::Device;

/// One function's configuration space reached through the bench.
pub struct Cfg<'a, D> {
    pub bench: &'a mut Bench<D>,
    pub target: Bdf,
}

impl<D: Device> ConfigRead for Cfg<'_, D> {
    type Error = CompletionStatus;
    fn read_dword(&mut self, offset: u16) -> Result<u32, CompletionStatus> {
        self.bench.config_read(self.target, offset)
    }
}

impl<D: Device> ConfigWrite for Cfg<'_, D> {
    fn write_dword(&mut self, offset: u16, value: u32, be: u8) -> Result<(), CompletionStatus> {
        self.bench.config_write(self.target, offset, value, be)
    }
}

pub fn cfg<D>(bench: &mut Bench<D>, target: Bdf) -> Cfg<'_, D> {
    Cfg { bench, target }
}

/// Sizes the header BARs the way Linux does (decode off, all ones, read
/// back, restore).
pub fn size_bars<D: Device>(bench: &mut Bench<D>, target: Bdf) -> [Option<DecodedBar>; MAX_BARS] {
    size_header_bars(&mut cfg(bench, target)).expect("BARs size cleanly")
}

/// Writes a BAR's address (both halves for a 64-bit BAR).
pub fn place_bar<D: Device>(bench: &mut Bench<D>, target: Bdf, slot: u8, address: u64, wide: bool) {
    let register = 0x10 + 4 * u16::from(slot);
    bench
        .config_write(target, register, address as u32, 0xf)
        .expect("BAR write");
    if wide {
        bench
            .config_write(target, register + 4, (address >> 32) as u32, 0xf)
            .expect("BAR upper write");
    }
}

/// Sets Memory Space Enable and Bus Master Enable (Command bits 1 and 2).
pub fn enable<D: Device>(bench: &mut Bench<D>, target: Bdf) {
    bench
        .config_write(target, 0x04, 0b110, 0b0011)
        .expect("command write");
}

/// Finds a capability by walking the list through configuration reads.
pub fn find_cap<D: Device>(bench: &mut Bench<D>, target: Bdf, id: u8) -> Option<u16> {
    weft_devices::pcie::config::walk::find_capability(cfg(bench, target), id).expect("walk")
}

/// Finds an extended capability.
pub fn find_ext_cap<D: Device>(bench: &mut Bench<D>, target: Bdf, id: u16) -> Option<u16> {
    weft_devices::pcie::config::walk::find_extended_capability(cfg(bench, target), id)
        .expect("walk")
}

/// Programs and enables a 64-bit MSI capability with one vector.
pub fn setup_msi<D: Device>(bench: &mut Bench<D>, target: Bdf, address: u64, data: u16) {
    let msi = find_cap(bench, target, 0x05).expect("MSI capability");
    bench
        .config_write(target, msi + 4, address as u32, 0xf)
        .expect("addr");
    bench
        .config_write(target, msi + 8, (address >> 32) as u32, 0xf)
        .expect("upper");
    bench
        .config_write(target, msi + 0x0c, u32::from(data), 0b0011)
        .expect("data");
    // Message Control is the upper half of the header DW: Enable is bit 16.
    bench
        .config_write(target, msi, 1 << 16, 0b0100)
        .expect("enable");
}

/// Sets Max_Payload_Size and Max_Read_Request_Size (encodings) in the PCI
/// Express capability's Device Control.
pub fn set_payload_sizes<D: Device>(bench: &mut Bench<D>, target: Bdf, mps: u16, mrrs: u16) {
    let pcie = find_cap(bench, target, 0x10).expect("PCIe capability");
    let control = bench.config_read(target, pcie + 8).expect("devctl") & 0xffff;
    let control = (control as u16 & !(0b111 << 5) & !(0b111 << 12)) | mps << 5 | mrrs << 12;
    bench
        .config_write(target, pcie + 8, u32::from(control), 0b0011)
        .expect("devctl write");
}
