//! The NVMe model driven by a minimal host driver: enumeration, SR-IOV VFs
//! at their spec-computed routing IDs, admin and I/O command flows on the PF
//! and on VFs, MSI-X and MSI interrupts, phase tags, and CRS while booting.

mod common;

use std::time::Duration;

use common::*;
use weft_devices::bench::Bench;
use weft_devices::nvme::command::{admin, io, Command, CompletionEntry, Status};
use weft_devices::nvme::{Nvme, NvmeConfig};
use weft_devices::pcie::tlp::CompletionStatus;
use weft_devices::pcie::Bdf;
use weft_devices::{ConfigError, Device};

const PF: Bdf = Bdf::new(1, 0, 0);
const PF_BAR: u64 = 0x8_0000_0000;
const VF_BAR: u64 = 0x8_1000_0000;

fn nvme(config: NvmeConfig) -> Bench<Nvme> {
    let mut bench = Bench::new();
    bench.attach(1, Nvme::new(config).expect("valid NVMe"));
    bench
}

fn sriov_offset(bench: &mut Bench<Nvme>) -> u16 {
    find_ext_cap(bench, PF, 0x0010).expect("SR-IOV capability")
}

/// Sets NumVFs and VF Enable + VF MSE, and places the VF BAR0 array.
fn enable_vfs(bench: &mut Bench<Nvme>, count: u16) {
    let sriov = sriov_offset(bench);
    bench
        .config_write(PF, sriov + 0x10, u32::from(count), 0b0011)
        .expect("NumVFs");
    bench
        .config_write(PF, sriov + 0x24, VF_BAR as u32, 0xf)
        .expect("VF BAR0");
    bench
        .config_write(PF, sriov + 0x28, (VF_BAR >> 32) as u32, 0xf)
        .expect("VF BAR0 hi");
    // VF Enable (bit 0) and VF MSE (bit 3) in SR-IOV Control.
    bench
        .config_write(PF, sriov + 0x08, 0b1001, 0b0011)
        .expect("VF Enable");
}

/// A host NVMe driver using only the standard interfaces.
struct Driver {
    id: Bdf,
    bar: u64,
    memory: u64,
    admin_tail: u16,
    admin_head: u16,
    admin_phase: bool,
    io_tail: u16,
    io_head: u16,
    io_phase: bool,
    cid: u16,
}

const ADMIN_ENTRIES: u16 = 4;
const IO_ENTRIES: u16 = 8;

impl Driver {
    fn asq(&self) -> u64 {
        self.memory
    }
    fn acq(&self) -> u64 {
        self.memory + 0x1000
    }
    fn iosq(&self) -> u64 {
        self.memory + 0x2000
    }
    fn iocq(&self) -> u64 {
        self.memory + 0x3000
    }
    fn buffer(&self) -> u64 {
        self.memory + 0x10000
    }

    /// Enables the controller with the admin queues (NVMe Base 2.0 §3.5.1)
    /// and MSI-X with vector v at 0xFEE0_0000 + v * 0x10, data `data_base + v`.
    fn start(bench: &mut Bench<Nvme>, id: Bdf, bar: u64, memory: u64, data_base: u32) -> Self {
        let msix = find_cap(bench, id, 0x11).expect("MSI-X");
        for vector in 0..2u64 {
            let entry = bar + 0x2000 + vector * 16;
            bench.write_u32(entry, 0xfee0_0000 + vector as u32 * 0x10);
            bench.write_u32(entry + 4, 0);
            bench.write_u32(entry + 8, data_base + vector as u32);
            bench.write_u32(entry + 12, 0);
        }
        bench
            .config_write(id, msix, 1 << 31, 0b1000)
            .expect("MSI-X enable");
        let driver = Driver {
            id,
            bar,
            memory,
            admin_tail: 0,
            admin_head: 0,
            admin_phase: true,
            io_tail: 0,
            io_head: 0,
            io_phase: true,
            cid: 0,
        };
        let aqa = u32::from(ADMIN_ENTRIES - 1) << 16 | u32::from(ADMIN_ENTRIES - 1);
        bench.write_u32(bar + 0x24, aqa);
        bench.write_u32(bar + 0x28, driver.asq() as u32);
        bench.write_u32(bar + 0x2c, (driver.asq() >> 32) as u32);
        bench.write_u32(bar + 0x30, driver.acq() as u32);
        bench.write_u32(bar + 0x34, (driver.acq() >> 32) as u32);
        // CC: EN, IOSQES 6, IOCQES 4.
        bench.write_u32(bar + 0x14, 1 | 6 << 16 | 4 << 20);
        assert_eq!(
            bench.read_u32(bar + 0x1c).map(|csts| csts & 1),
            Ok(1),
            "CSTS.RDY"
        );
        driver
    }

    fn command(&mut self, opcode: u8, nsid: u32, prp1: u64, prp2: u64, cdw: [u32; 6]) -> Command {
        self.cid += 1;
        Command {
            opcode,
            cid: self.cid,
            nsid,
            prp1,
            prp2,
            cdw,
        }
    }

    fn admin(&mut self, bench: &mut Bench<Nvme>, command: Command) -> CompletionEntry {
        let slot = self.asq() + u64::from(self.admin_tail) * 64;
        bench.host_memory_mut().write(slot, &command.encode());
        self.admin_tail = (self.admin_tail + 1) % ADMIN_ENTRIES;
        bench.write_u32(self.bar + 0x1000, u32::from(self.admin_tail));
        bench.run().expect("quiesces");
        let entry = self.reap(bench, self.acq(), true);
        bench.write_u32(self.bar + 0x1004, u32::from(self.admin_head));
        entry
    }

    fn io(&mut self, bench: &mut Bench<Nvme>, command: Command) -> CompletionEntry {
        let slot = self.iosq() + u64::from(self.io_tail) * 64;
        bench.host_memory_mut().write(slot, &command.encode());
        self.io_tail = (self.io_tail + 1) % IO_ENTRIES;
        bench.write_u32(self.bar + 0x1008, u32::from(self.io_tail));
        bench.run().expect("quiesces");
        let entry = self.reap(bench, self.iocq(), false);
        bench.write_u32(self.bar + 0x100c, u32::from(self.io_head));
        entry
    }

    /// Takes the next entry, checking its phase tag says it is new.
    fn reap(&mut self, bench: &Bench<Nvme>, base: u64, admin: bool) -> CompletionEntry {
        let (head, phase, entries) = if admin {
            (&mut self.admin_head, &mut self.admin_phase, ADMIN_ENTRIES)
        } else {
            (&mut self.io_head, &mut self.io_phase, IO_ENTRIES)
        };
        let bytes = bench.host_memory().read(base + u64::from(*head) * 16, 16);
        let entry = CompletionEntry::decode(&bytes.try_into().expect("16 bytes"));
        assert_eq!(entry.phase, *phase, "a new entry carries the current phase");
        *head = (*head + 1) % entries;
        if *head == 0 {
            *phase = !*phase;
        }
        entry
    }

    /// Identify, then one I/O queue pair on vector 1.
    fn bring_up(&mut self, bench: &mut Bench<Nvme>) -> Vec<u8> {
        let buffer = self.buffer();
        let identify = self.command(admin::IDENTIFY, 0, buffer, 0, [1, 0, 0, 0, 0, 0]);
        assert_eq!(self.admin(bench, identify).status, Status::SUCCESS);
        let controller = bench.host_memory().read(buffer, 4096);
        let qsize = u32::from(IO_ENTRIES - 1) << 16;
        let cq = self.command(
            admin::CREATE_IO_CQ,
            0,
            self.iocq(),
            0,
            [qsize | 1, 1 << 16 | 0b11, 0, 0, 0, 0],
        );
        assert_eq!(self.admin(bench, cq).status, Status::SUCCESS);
        let sq = self.command(
            admin::CREATE_IO_SQ,
            0,
            self.iosq(),
            0,
            [qsize | 1, 1 << 16 | 1, 0, 0, 0, 0],
        );
        assert_eq!(self.admin(bench, sq).status, Status::SUCCESS);
        controller
    }

    fn write_blocks(
        &mut self,
        bench: &mut Bench<Nvme>,
        lba: u64,
        data: &[u8],
        prp1: u64,
        prp2: u64,
    ) -> Status {
        bench
            .host_memory_mut()
            .write(prp1, &data[..data.len().min(4096 - (prp1 % 4096) as usize)]);
        let blocks = (data.len() / 512) as u32 - 1;
        let command = self.command(
            io::WRITE,
            1,
            prp1,
            prp2,
            [lba as u32, (lba >> 32) as u32, blocks, 0, 0, 0],
        );
        self.io(bench, command).status
    }

    fn read_blocks(
        &mut self,
        bench: &mut Bench<Nvme>,
        lba: u64,
        blocks: u32,
        prp1: u64,
        prp2: u64,
    ) -> Status {
        let command = self.command(
            io::READ,
            1,
            prp1,
            prp2,
            [lba as u32, (lba >> 32) as u32, blocks - 1, 0, 0, 0],
        );
        self.io(bench, command).status
    }
}

fn pattern(len: usize, seed: u8) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u8).wrapping_mul(13).wrapping_add(seed))
        .collect()
}

fn enumerate_pf(bench: &mut Bench<Nvme>) {
    size_bars(bench, PF);
    place_bar(bench, PF, 0, PF_BAR, true);
    enable(bench, PF);
}

#[test]
fn the_pf_is_an_nvme_controller_with_a_16_kib_64_bit_bar() {
    let mut bench = nvme(NvmeConfig::default());
    assert_eq!(bench.config_read(PF, 0x00), Ok(0xa824_144d));
    assert_eq!(bench.config_read(PF, 0x08).map(|v| v >> 8), Ok(0x01_08_02));
    bench.config_write(PF, 0x10, u32::MAX, 0xf).expect("write");
    bench.config_write(PF, 0x14, u32::MAX, 0xf).expect("write");
    assert_eq!(bench.config_read(PF, 0x10), Ok(0xffff_c004));
    assert_eq!(bench.config_read(PF, 0x14), Ok(0xffff_ffff));
    for id in [0x01, 0x05, 0x10, 0x11] {
        assert!(find_cap(&mut bench, PF, id).is_some(), "capability {id:#x}");
    }
    for id in [0x0001, 0x000e, 0x0010] {
        assert!(
            find_ext_cap(&mut bench, PF, id).is_some(),
            "extended {id:#x}"
        );
    }
    let sriov = sriov_offset(&mut bench);
    // TotalVFs 4 (0x0e), First VF Offset 1 and VF Stride 1 (0x14), VF Device ID (0x1a).
    assert_eq!(bench.config_read(PF, sriov + 0x0c).map(|v| v >> 16), Ok(4));
    assert_eq!(bench.config_read(PF, sriov + 0x14), Ok(0x0001_0001));
    assert_eq!(
        bench.config_read(PF, sriov + 0x18).map(|v| v >> 16),
        Ok(0xa824)
    );
    // VF BAR0 sizes like a header BAR: 16 KiB, 64-bit.
    bench
        .config_write(PF, sriov + 0x24, u32::MAX, 0xf)
        .expect("write");
    assert_eq!(bench.config_read(PF, sriov + 0x24), Ok(0xffff_c004));
}

#[test]
fn vfs_appear_at_the_routing_ids_first_vf_offset_and_stride_give() {
    let mut bench = nvme(NvmeConfig {
        first_vf_offset: 0x80,
        vf_stride: 2,
        ..NvmeConfig::default()
    });
    // Before VF Enable nothing answers at the VF IDs.
    assert_eq!(
        bench.config_read(Bdf(0x0180), 0),
        Err(CompletionStatus::UnsupportedRequest)
    );
    enable_vfs(&mut bench, 3);
    // PF 01:00.0 = 0x0100; VF n = 0x0100 + 0x80 + (n - 1) * 2 (§9.3.3.9-10).
    for id in [0x0180u16, 0x0182, 0x0184] {
        // §9.3.4.1.1-2: Vendor ID and Device ID read FFFFh.
        assert_eq!(
            bench.config_read(Bdf(id), 0x00),
            Ok(0xffff_ffff),
            "{id:#06x}"
        );
        assert_eq!(
            bench.config_read(Bdf(id), 0x08).map(|v| v >> 8),
            Ok(0x01_08_02)
        );
        // VF BARs are read-only zero (§9.3.4.1.10).
        bench
            .config_write(Bdf(id), 0x10, u32::MAX, 0xf)
            .expect("write");
        assert_eq!(bench.config_read(Bdf(id), 0x10), Ok(0));
    }
    for id in [0x0181u16, 0x0183, 0x0186] {
        assert_eq!(
            bench.config_read(Bdf(id), 0),
            Err(CompletionStatus::UnsupportedRequest)
        );
    }
    // NumVFs cannot change while VF Enable is set (§9.3.3.7).
    let sriov = sriov_offset(&mut bench);
    bench
        .config_write(PF, sriov + 0x10, 4, 0b0011)
        .expect("write");
    assert_eq!(
        bench.config_read(PF, sriov + 0x10).map(|v| v & 0xffff),
        Ok(3)
    );
    // Clearing VF Enable removes them.
    bench
        .config_write(PF, sriov + 0x08, 0, 0b0011)
        .expect("write");
    assert_eq!(
        bench.config_read(Bdf(0x0180), 0),
        Err(CompletionStatus::UnsupportedRequest)
    );
}

#[test]
fn vfs_past_function_255_land_on_the_next_bus() {
    let mut bench = nvme(NvmeConfig {
        first_vf_offset: 0xff,
        vf_stride: 1,
        ..NvmeConfig::default()
    });
    enable_vfs(&mut bench, 2);
    // 0x0100 + 0xff = 0x01ff (01:1f.7); 0x0100 + 0x100 = 0x0200 (02:00.0).
    assert_eq!(bench.config_read(Bdf(0x01ff), 0), Ok(0xffff_ffff));
    assert_eq!(bench.config_read(Bdf::new(2, 0, 0), 0), Ok(0xffff_ffff));
    let device = bench.device(0).expect("nvme");
    assert_eq!(device.vf_id(2), Some(Bdf(0x0200)));
}

#[test]
fn num_vfs_above_total_vfs_is_ignored() {
    let mut bench = nvme(NvmeConfig::default());
    let sriov = sriov_offset(&mut bench);
    bench
        .config_write(PF, sriov + 0x10, 5, 0b0011)
        .expect("write");
    assert_eq!(
        bench.config_read(PF, sriov + 0x10).map(|v| v & 0xffff),
        Ok(0)
    );
}

#[test]
fn configuration_requests_get_crs_while_the_device_boots() {
    let mut bench = nvme(NvmeConfig {
        boot_time: Duration::from_millis(100),
        ..NvmeConfig::default()
    });
    assert_eq!(
        bench.config_read(PF, 0),
        Err(CompletionStatus::RequestRetry)
    );
    bench.advance(Duration::from_millis(99));
    assert_eq!(
        bench.config_write(PF, 4, 2, 0b11),
        Err(CompletionStatus::RequestRetry)
    );
    bench.advance(Duration::from_millis(1));
    assert_eq!(bench.config_read(PF, 0), Ok(0xa824_144d));
    // Through the direct interface: a reset starts the window again.
    let now = bench.now();
    let device = bench.device_mut(0).expect("nvme");
    device.reset(now);
    assert_eq!(
        device.config_read(now + Duration::from_millis(50), PF, 0),
        Err(ConfigError::Retry {
            target: PF,
            ready_at: now + Duration::from_millis(100)
        })
    );
    assert_eq!(
        device.config_read(now + Duration::from_millis(100), PF, 0),
        Ok(0xa824_144d)
    );
}

#[test]
fn the_pf_runs_identify_queue_creation_and_write_then_read_back() {
    let mut bench = nvme(NvmeConfig::default());
    enumerate_pf(&mut bench);
    let mut driver = Driver::start(&mut bench, PF, PF_BAR, 0x1_0000_0000, 0x100);
    let identify = driver.bring_up(&mut bench);
    assert_eq!(&identify[0..2], &[0x4d, 0x14], "VID");
    assert_eq!(&identify[516..520], &[1, 0, 0, 0], "one namespace");
    // Identify Namespace: NSZE = 1 MiB / 512 = 2048 blocks.
    let buffer = driver.buffer();
    let ns = driver.command(admin::IDENTIFY, 1, buffer, 0, [0, 0, 0, 0, 0, 0]);
    assert_eq!(driver.admin(&mut bench, ns).status, Status::SUCCESS);
    assert_eq!(bench.host_memory().read(buffer, 8), 2048u64.to_le_bytes());
    // Two pages: PRP1 with an offset, PRP2 the next page (8 blocks = 4 KiB).
    let data = pattern(4096, 3);
    let (prp1, prp2) = (0x2_0000_0200, 0x2_0004_0000);
    bench.host_memory_mut().write(prp2, &data[0xe00..]);
    assert_eq!(
        driver.write_blocks(&mut bench, 10, &data, prp1, prp2),
        Status::SUCCESS
    );
    let (out1, out2) = (0x3_0000_0000, 0x3_0008_0000);
    assert_eq!(
        driver.read_blocks(&mut bench, 10, 8, out1, out2),
        Status::SUCCESS
    );
    assert_eq!(bench.host_memory().read(out1, 4096), data);
    let namespace = bench.device(0).expect("nvme").namespace(None).expect("pf");
    assert_eq!(namespace.read(10 * 512, 4096), data);
}

#[test]
fn a_prp_list_carries_transfers_of_more_than_two_pages() {
    let mut bench = nvme(NvmeConfig::default());
    enumerate_pf(&mut bench);
    let mut driver = Driver::start(&mut bench, PF, PF_BAR, 0x1_0000_0000, 0x100);
    driver.bring_up(&mut bench);
    let data = pattern(16 * 1024, 9);
    let pages = [
        0x4_0000_0000u64,
        0x4_0010_0000,
        0x4_0020_0000,
        0x4_0030_0000,
    ];
    for (page, chunk) in pages.iter().zip(data.chunks(4096)) {
        bench.host_memory_mut().write(*page, chunk);
    }
    let list = 0x4_1000_0000u64;
    let entries: Vec<u8> = pages[1..].iter().flat_map(|p| p.to_le_bytes()).collect();
    bench.host_memory_mut().write(list, &entries);
    assert_eq!(
        driver.write_blocks(&mut bench, 100, &data, pages[0], list),
        Status::SUCCESS
    );
    let namespace = bench.device(0).expect("nvme").namespace(None).expect("pf");
    assert_eq!(namespace.read(100 * 512, data.len()), data);
}

#[test]
fn completions_signal_the_msix_vector_of_their_queue() {
    let mut bench = nvme(NvmeConfig::default());
    enumerate_pf(&mut bench);
    let mut driver = Driver::start(&mut bench, PF, PF_BAR, 0x1_0000_0000, 0x100);
    driver.bring_up(&mut bench);
    let admin: Vec<_> = bench.take_interrupts();
    // Three admin commands, each on vector 0 as programmed.
    assert_eq!(admin.len(), 3);
    assert!(admin
        .iter()
        .all(|i| i.address == 0xfee0_0000 && i.data == 0x100 && i.requester == PF));
    let flush = driver.command(io::FLUSH, 1, 0, 0, [0; 6]);
    driver.io(&mut bench, flush);
    let io = bench.take_interrupts();
    assert_eq!(io.len(), 1);
    assert_eq!((io[0].address, io[0].data), (0xfee0_0010, 0x101));
}

#[test]
fn with_msi_instead_of_msix_the_pf_sends_the_programmed_message() {
    let mut bench = nvme(NvmeConfig::default());
    enumerate_pf(&mut bench);
    setup_msi(&mut bench, PF, 0xfee0_2000, 0x4077);
    let mut driver = Driver::start(&mut bench, PF, PF_BAR, 0x1_0000_0000, 0x100);
    // Turn MSI-X off again: MSI takes over.
    let msix = find_cap(&mut bench, PF, 0x11).expect("MSI-X");
    bench.config_write(PF, msix, 0, 0b1000).expect("MSI-X off");
    bench.take_interrupts();
    let identify = driver.command(admin::IDENTIFY, 0, driver.buffer(), 0, [1, 0, 0, 0, 0, 0]);
    driver.admin(&mut bench, identify);
    let got = bench.take_interrupts();
    assert_eq!(got.len(), 1);
    assert_eq!((got[0].address, got[0].data), (0xfee0_2000, 0x4077));
}

#[test]
fn the_phase_tag_flips_when_the_completion_queue_wraps() {
    let mut bench = nvme(NvmeConfig::default());
    enumerate_pf(&mut bench);
    let mut driver = Driver::start(&mut bench, PF, PF_BAR, 0x1_0000_0000, 0x100);
    // Ten Get Features on a four-entry admin queue: reap checks each
    // entry's phase against the expected one, flipping on every wrap.
    for _ in 0..10 {
        let get = driver.command(admin::GET_FEATURES, 0, 0, 0, [7, 0, 0, 0, 0, 0]);
        let entry = driver.admin(&mut bench, get);
        assert_eq!(entry.status, Status::SUCCESS);
        // Number of Queues, 0's based: 4 queue pairs -> 3 | 3 << 16.
        assert_eq!(entry.dw0, 0x0003_0003);
    }
}

#[test]
fn bad_commands_complete_with_their_status_codes() {
    let mut bench = nvme(NvmeConfig::default());
    enumerate_pf(&mut bench);
    let mut driver = Driver::start(&mut bench, PF, PF_BAR, 0x1_0000_0000, 0x100);
    driver.bring_up(&mut bench);
    let bogus = driver.command(0x7f, 0, 0, 0, [0; 6]);
    assert_eq!(
        driver.admin(&mut bench, bogus).status,
        Status::INVALID_OPCODE
    );
    let beyond = driver.read_blocks(&mut bench, 2047, 2, 0x5_0000_0000, 0x5_0000_1000);
    assert_eq!(beyond, Status::LBA_OUT_OF_RANGE);
    let cq_missing = driver.command(
        admin::CREATE_IO_SQ,
        0,
        0x6_0000_0000,
        0,
        [2 | 7 << 16, 3 << 16 | 1, 0, 0, 0, 0],
    );
    assert_eq!(
        driver.admin(&mut bench, cq_missing).status,
        Status::INVALID_CQ
    );
}

/// Enables VFs and brings up a driver on VF `vf` (1-based).
fn vf_driver(bench: &mut Bench<Nvme>, vf: u16, memory: u64) -> Driver {
    let id = bench
        .device(0)
        .expect("nvme")
        .vf_id(vf)
        .expect("VF enabled");
    // The VF's own Bus Master Enable; memory decode is the PF's VF MSE.
    bench
        .config_write(id, 0x04, 0b100, 0b0011)
        .expect("command");
    let bar = VF_BAR + u64::from(vf - 1) * 0x4000;
    Driver::start(bench, id, bar, memory, 0x200 + u32::from(vf) * 0x10)
}

#[test]
fn the_same_driver_runs_on_two_vfs_with_separate_namespaces() {
    let mut bench = nvme(NvmeConfig::default());
    enumerate_pf(&mut bench);
    enable_vfs(&mut bench, 2);
    let mut first = vf_driver(&mut bench, 1, 0x10_0000_0000);
    let mut second = vf_driver(&mut bench, 2, 0x20_0000_0000);
    assert_eq!(first.id, Bdf::new(1, 0, 1));
    assert_eq!(second.id, Bdf::new(1, 0, 2));
    let identify = first.bring_up(&mut bench);
    assert_eq!(&identify[78..80], &[1, 0], "controller ID of VF 1");
    second.bring_up(&mut bench);
    let a = pattern(1024, 1);
    let b = pattern(1024, 2);
    assert_eq!(
        first.write_blocks(&mut bench, 0, &a, 0x11_0000_0000, 0),
        Status::SUCCESS
    );
    assert_eq!(
        second.write_blocks(&mut bench, 0, &b, 0x21_0000_0000, 0),
        Status::SUCCESS
    );
    assert_eq!(
        first.read_blocks(&mut bench, 0, 2, 0x12_0000_0000, 0),
        Status::SUCCESS
    );
    assert_eq!(
        second.read_blocks(&mut bench, 0, 2, 0x22_0000_0000, 0),
        Status::SUCCESS
    );
    assert_eq!(bench.host_memory().read(0x12_0000_0000, 1024), a);
    assert_eq!(bench.host_memory().read(0x22_0000_0000, 1024), b);
    // Every interrupt names the VF that sent it.
    let interrupts = bench.take_interrupts();
    assert!(interrupts
        .iter()
        .any(|i| i.requester == first.id && i.data == 0x211));
    assert!(interrupts
        .iter()
        .any(|i| i.requester == second.id && i.data == 0x221));
    // Each VF's DMA carries its own requester ID.
    assert!(bench
        .trace()
        .iter()
        .filter_map(|t| t.packet.memory())
        .filter(|r| r.address >= 0x12_0000_0000 && r.address < 0x13_0000_0000)
        .all(|r| r.requester == first.id));
}

#[test]
fn vf_bars_decode_only_with_vf_mse() {
    let mut bench = nvme(NvmeConfig::default());
    enumerate_pf(&mut bench);
    enable_vfs(&mut bench, 1);
    // CAP low DW: MQES 255, CQR.
    assert_eq!(bench.read_u32(VF_BAR), Ok(0x0101_00ff));
    let sriov = sriov_offset(&mut bench);
    bench
        .config_write(PF, sriov + 0x08, 0b0001, 0b0011)
        .expect("VF MSE off");
    assert!(bench.read_u32(VF_BAR).is_err());
}
