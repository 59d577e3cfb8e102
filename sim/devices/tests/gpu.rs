//! The GPU model as a host and a peer see it: enumeration, DMA split into
//! legal TLPs, MSI on completion, Bus Master Enable, and peer-to-peer copies
//! between two GPUs wired back to back.

mod common;

use common::*;
use weft_devices::bench::{Bench, Interrupt, Node};
use weft_devices::gpu::{regs, Gpu, GpuConfig};
use weft_devices::pcie::tlp::{Body, MemoryOp};
use weft_devices::pcie::Bdf;

const GPU0: Bdf = Bdf::new(1, 0, 0);
const GPU1: Bdf = Bdf::new(2, 0, 0);
const BAR0_0: u64 = 0xe000_0000;
const BAR1_0: u64 = 0x40_0000_0000;
const BAR0_1: u64 = 0xe100_0000;
const BAR1_1: u64 = 0x40_1000_0000;

fn small_gpu() -> Gpu {
    Gpu::new(GpuConfig {
        memory_size: 1 << 20,
        ..GpuConfig::default()
    })
    .expect("valid GPU")
}

/// A bench with GPUs at buses 1 and 2, enumerated and enabled.
fn two_gpus() -> Bench<Gpu> {
    let mut bench = Bench::new();
    bench.attach(1, small_gpu());
    bench.attach(2, small_gpu());
    for (id, bar0, bar1) in [(GPU0, BAR0_0, BAR1_0), (GPU1, BAR0_1, BAR1_1)] {
        size_bars(&mut bench, id);
        place_bar(&mut bench, id, 0, bar0, false);
        place_bar(&mut bench, id, 1, bar1, true);
        enable(&mut bench, id);
    }
    bench
}

fn copy(bench: &mut Bench<Gpu>, bar0: u64, src: u64, dst: u64, len: u32, control: u32) {
    bench.write_u32(bar0 + regs::DMA_SRC_LO, src as u32);
    bench.write_u32(bar0 + regs::DMA_SRC_HI, (src >> 32) as u32);
    bench.write_u32(bar0 + regs::DMA_DST_LO, dst as u32);
    bench.write_u32(bar0 + regs::DMA_DST_HI, (dst >> 32) as u32);
    bench.write_u32(bar0 + regs::DMA_LEN, len);
    bench.write_u32(bar0 + regs::DMA_CONTROL, control);
    bench.write_u32(bar0 + regs::DMA_DOORBELL, 1);
    bench.run().expect("the copy finishes");
}

fn pattern(len: usize, seed: u8) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed))
        .collect()
}

/// (address, bytes) of every Memory Write the GPU at `from` sent.
fn writes_from(bench: &Bench<Gpu>, from: usize) -> Vec<(u64, usize)> {
    bench
        .trace()
        .iter()
        .filter(|t| t.from == Node::Device(from))
        .filter_map(|t| match &t.packet.header.body {
            Body::Memory(r) if r.op == MemoryOp::Write => {
                let skipped = r.first_be.trailing_zeros() as u64;
                let len = r.length_dw as usize * 4
                    - skipped as usize
                    - if r.length_dw > 1 {
                        r.last_be.leading_zeros() as usize - 4
                    } else {
                        r.first_be.leading_zeros() as usize - 4
                    };
                Some((r.address + skipped, len))
            }
            _ => None,
        })
        .collect()
}

#[test]
fn the_os_sizes_a_16_mib_register_bar_and_a_256_mib_prefetchable_window() {
    let mut bench = Bench::new();
    bench.attach(1, Gpu::new(GpuConfig::default()).expect("valid GPU"));
    // Vendor 10DE, device 17FD; class 03_02_00 (3D controller).
    assert_eq!(bench.config_read(GPU0, 0x00), Ok(0x17fd_10de));
    assert_eq!(
        bench.config_read(GPU0, 0x08).map(|v| v >> 8),
        Ok(0x03_02_00)
    );
    // BAR0 by hand: all ones reads back the size mask with type 0 (32-bit,
    // non-prefetchable): 16 MiB -> 0xFF00_0000.
    bench
        .config_write(GPU0, 0x10, u32::MAX, 0xf)
        .expect("write");
    assert_eq!(bench.config_read(GPU0, 0x10), Ok(0xff00_0000));
    // BAR1: 64-bit prefetchable (type 10b, bit 3) of 256 MiB: low 0xF000_000C,
    // upper all ones.
    bench
        .config_write(GPU0, 0x14, u32::MAX, 0xf)
        .expect("write");
    bench
        .config_write(GPU0, 0x18, u32::MAX, 0xf)
        .expect("write");
    assert_eq!(bench.config_read(GPU0, 0x14), Ok(0xf000_000c));
    assert_eq!(bench.config_read(GPU0, 0x18), Ok(0xffff_ffff));
    // The rest of the BARs are unimplemented: read 0 after all ones.
    for register in [0x1c, 0x20, 0x24] {
        bench
            .config_write(GPU0, register, u32::MAX, 0xf)
            .expect("write");
        assert_eq!(bench.config_read(GPU0, register), Ok(0));
    }
    // Through the enumerator's own sizing routine as well.
    bench.config_write(GPU0, 0x10, 0, 0xf).expect("write");
    let bars = size_bars(&mut bench, GPU0);
    let sizes: Vec<_> = bars.iter().map(|b| b.map(|b| b.bar.size)).collect();
    assert_eq!(
        sizes,
        [Some(16 << 20), Some(256 << 20), None, None, None, None]
    );
}

#[test]
fn capabilities_are_pm_msi64_pcie_endpoint_gen3_x16_and_aer() {
    let mut bench = Bench::new();
    bench.attach(1, small_gpu());
    assert!(find_cap(&mut bench, GPU0, 0x01).is_some(), "PM");
    let msi = find_cap(&mut bench, GPU0, 0x05).expect("MSI");
    // Message Control bit 7: 64-bit address capable.
    assert_ne!(bench.config_read(GPU0, msi).expect("read") >> 16 & 0x80, 0);
    let pcie = find_cap(&mut bench, GPU0, 0x10).expect("PCIe");
    // Device/Port Type 0000b (endpoint) in bits 7:4 of the capabilities register.
    assert_eq!(bench.config_read(GPU0, pcie).expect("read") >> 20 & 0xf, 0);
    // Link Status: speed 3 (8 GT/s), width 16.
    let link_status = bench.config_read(GPU0, pcie + 0x10).expect("read") >> 16;
    assert_eq!((link_status & 0xf, link_status >> 4 & 0x3f), (3, 16));
    assert!(find_ext_cap(&mut bench, GPU0, 0x0001).is_some(), "AER");
}

#[test]
fn memory_bars_decode_only_while_memory_space_is_enabled() {
    let mut bench = Bench::new();
    bench.attach(1, small_gpu());
    place_bar(&mut bench, GPU0, 0, BAR0_0, false);
    assert!(bench.read_u32(BAR0_0).is_err(), "no decode before MSE");
    enable(&mut bench, GPU0);
    assert_eq!(bench.read_u32(BAR0_0 + regs::ID), Ok(regs::ID_VALUE));
}

#[test]
fn a_copy_to_host_memory_is_split_at_mps_and_4_kib_and_ends_with_the_msi() {
    let mut bench = two_gpus();
    set_payload_sizes(&mut bench, GPU0, 1, 2); // MPS 256, MRRS 512
    setup_msi(&mut bench, GPU0, 0xfee0_1000, 0x4021);
    let data = pattern(1000, 7);
    bench
        .device_mut(0)
        .expect("gpu")
        .memory_mut()
        .write(0x40, &data);
    bench.clear_trace();
    copy(
        &mut bench,
        BAR0_0,
        0x40,
        0x1_0000_0fc0,
        1000,
        regs::control::SRC_LOCAL | regs::control::INTERRUPT,
    );
    // Hand-computed from §2.2.2 and §2.2.7: 64 bytes up to the 4 KiB
    // boundary, then 256-byte payloads, then the remainder.
    let expected = vec![
        (0x1_0000_0fc0, 64),
        (0x1_0000_1000, 256),
        (0x1_0000_1100, 256),
        (0x1_0000_1200, 256),
        (0x1_0000_1300, 168),
        (0xfee0_1000, 4),
    ];
    assert_eq!(writes_from(&bench, 0), expected);
    assert_eq!(bench.host_memory().read(0x1_0000_0fc0, 1000), data);
    assert_eq!(
        bench.interrupts(),
        [Interrupt {
            requester: GPU0,
            address: 0xfee0_1000,
            data: 0x4021
        }]
    );
    let status = bench.read_u32(BAR0_0 + regs::DMA_STATUS).expect("status");
    assert_eq!(status, regs::status::DONE);
}

#[test]
fn every_write_obeys_mps_and_the_4_kib_rule_for_odd_sizes() {
    for (mps_encoding, mps) in [(0u16, 128usize), (1, 256), (2, 512)] {
        let mut bench = two_gpus();
        set_payload_sizes(&mut bench, GPU0, mps_encoding, 2);
        let data = pattern(9001, 3);
        bench
            .device_mut(0)
            .expect("gpu")
            .memory_mut()
            .write(0, &data);
        bench.clear_trace();
        copy(
            &mut bench,
            BAR0_0,
            0,
            0x2_0000_0003,
            9001,
            regs::control::SRC_LOCAL,
        );
        let writes = writes_from(&bench, 0);
        let mut next = 0x2_0000_0003u64;
        for &(address, len) in &writes {
            assert_eq!(address, next, "writes are contiguous and in order");
            // Payload counted in whole DWs within MPS (§2.2.2).
            let dws = ((address & 3) as usize + len).div_ceil(4);
            assert!(
                dws * 4 <= mps,
                "{len} bytes at {address:#x} exceed MPS {mps}"
            );
            assert_eq!(
                address / 4096,
                (address + len as u64 - 1) / 4096,
                "crosses 4 KiB"
            );
            next += len as u64;
        }
        assert_eq!(next, 0x2_0000_0003 + 9001);
        assert_eq!(bench.host_memory().read(0x2_0000_0003, 9001), data);
    }
}

#[test]
fn a_copy_from_host_memory_reads_at_mrrs_and_consumes_rcb_sized_completions() {
    let mut bench = two_gpus();
    set_payload_sizes(&mut bench, GPU0, 0, 0); // MPS 128, MRRS 128
    let data = pattern(5000, 11);
    bench.host_memory_mut().write(0x3_0000_0f00, &data);
    bench.clear_trace();
    copy(
        &mut bench,
        BAR0_0,
        0x3_0000_0f00,
        0x100,
        5000,
        regs::control::DST_LOCAL,
    );
    let reads: Vec<(u64, u16)> = bench
        .trace()
        .iter()
        .filter(|t| t.from == Node::Device(0))
        .filter_map(|t| t.packet.memory().filter(|r| r.op == MemoryOp::Read))
        .map(|r| (r.address, r.length_dw))
        .collect();
    // 0xF00..0x1000 is two 128-byte reads, then 4 KiB of 32 DW reads, ...
    assert_eq!(reads[0], (0x3_0000_0f00, 32));
    assert_eq!(reads[1], (0x3_0000_0f80, 32));
    assert_eq!(reads[2], (0x3_0000_1000, 32));
    assert_eq!(reads.len(), 5000usize.div_ceil(128));
    assert_eq!(
        bench.device(0).expect("gpu").memory().read(0x100, 5000),
        data
    );
}

#[test]
fn without_bus_master_enable_the_engine_sends_nothing_and_reports_why() {
    let mut bench = two_gpus();
    // Memory Space only.
    bench
        .config_write(GPU0, 0x04, 0b010, 0b0011)
        .expect("command");
    bench.clear_trace();
    copy(&mut bench, BAR0_0, 0, 0x1000, 64, regs::control::SRC_LOCAL);
    assert!(bench.trace().iter().all(|t| t.from == Node::Host));
    assert_eq!(
        bench.read_u32(BAR0_0 + regs::DMA_STATUS),
        Ok(regs::status::ERROR)
    );
    assert_eq!(
        bench.read_u32(BAR0_0 + regs::DMA_ERROR),
        Ok(regs::error::BUS_MASTER_DISABLED)
    );
}

#[test]
fn peer_to_peer_write_lands_in_the_other_gpus_memory() {
    let mut bench = two_gpus();
    set_payload_sizes(&mut bench, GPU0, 1, 2);
    let data = pattern(20_000, 5);
    bench
        .device_mut(0)
        .expect("gpu")
        .memory_mut()
        .write(0x1000, &data);
    bench.clear_trace();
    copy(
        &mut bench,
        BAR0_0,
        0x1000,
        BAR1_1 + 0x8000,
        20_000,
        regs::control::SRC_LOCAL,
    );
    assert_eq!(
        bench.device(1).expect("gpu").memory().read(0x8000, 20_000),
        data
    );
    // Every data write went from GPU 0 straight to GPU 1, none to the host.
    assert!(bench
        .trace()
        .iter()
        .filter(|t| t.from == Node::Device(0))
        .all(|t| t.to == Node::Device(1)));
}

#[test]
fn peer_to_peer_read_pulls_from_the_other_gpus_bar() {
    let mut bench = two_gpus();
    set_payload_sizes(&mut bench, GPU0, 1, 3); // MRRS 1024
    set_payload_sizes(&mut bench, GPU1, 0, 2); // GPU1 completes with 128-byte payloads
    let data = pattern(10_000, 9);
    bench
        .device_mut(1)
        .expect("gpu")
        .memory_mut()
        .write(0x2_0000, &data);
    bench.clear_trace();
    copy(
        &mut bench,
        BAR0_0,
        BAR1_1 + 0x2_0000,
        0x40,
        10_000,
        regs::control::DST_LOCAL,
    );
    assert_eq!(
        bench.device(0).expect("gpu").memory().read(0x40, 10_000),
        data
    );
    // GPU 1's completions carry at most its MPS (§2.2.2) and end on 128-byte
    // boundaries (RCB, §2.3.1.1).
    for t in bench.trace().iter().filter(|t| t.from == Node::Device(1)) {
        let completion = t.packet.completion().expect("GPU 1 only completes");
        assert!(t.packet.payload.len() <= 128);
        assert_eq!(completion.requester, GPU0);
    }
}

#[test]
fn bus_to_bus_copy_reads_the_host_and_writes_the_peer() {
    let mut bench = two_gpus();
    let data = pattern(3000, 1);
    bench.host_memory_mut().write(0x5000, &data);
    copy(&mut bench, BAR0_0, 0x5000, BAR1_1 + 0x100, 3000, 0);
    assert_eq!(
        bench.device(1).expect("gpu").memory().read(0x100, 3000),
        data
    );
}

#[test]
fn a_read_that_completes_with_ur_fails_the_copy() {
    let mut bench = two_gpus();
    bench.set_host_memory_limit(1 << 40);
    setup_msi(&mut bench, GPU0, 0xfee0_1000, 0x4021);
    copy(
        &mut bench,
        BAR0_0,
        1 << 41,
        0x40,
        4096,
        regs::control::DST_LOCAL | regs::control::INTERRUPT,
    );
    assert_eq!(
        bench.read_u32(BAR0_0 + regs::DMA_STATUS),
        Ok(regs::status::ERROR)
    );
    assert_eq!(
        bench.read_u32(BAR0_0 + regs::DMA_ERROR),
        Ok(regs::error::COMPLETION_ERROR)
    );
    // The failure is signalled like a finish: the driver need not time out.
    assert_eq!(
        bench.interrupts(),
        [Interrupt {
            requester: GPU0,
            address: 0xfee0_1000,
            data: 0x4021
        }]
    );
    // The engine is free again: the next copy runs.
    copy(
        &mut bench,
        BAR0_0,
        0x1000,
        0x40,
        64,
        regs::control::DST_LOCAL,
    );
    assert_eq!(
        bench.read_u32(BAR0_0 + regs::DMA_STATUS),
        Ok(regs::status::DONE)
    );
}

#[test]
fn the_doorbell_while_busy_leaves_the_running_copy_alone() {
    let mut bench = two_gpus();
    bench.write_u32(BAR0_0 + regs::DMA_LEN, 1 << 19);
    bench.write_u32(BAR0_0 + regs::DMA_CONTROL, regs::control::SRC_LOCAL);
    bench.write_u32(BAR0_0 + regs::DMA_DST_LO, 0x10_0000);
    bench.write_u32(BAR0_0 + regs::DMA_DOORBELL, 1);
    bench.write_u32(BAR0_0 + regs::DMA_DOORBELL, 1);
    assert_eq!(
        bench.read_u32(BAR0_0 + regs::DMA_ERROR),
        Ok(regs::error::BUSY)
    );
    assert_eq!(
        bench.read_u32(BAR0_0 + regs::DMA_STATUS),
        Ok(regs::status::BUSY)
    );
    bench.run().expect("finishes");
    assert_eq!(
        bench.read_u32(BAR0_0 + regs::DMA_STATUS),
        Ok(regs::status::DONE)
    );
    assert_eq!(bench.read_u32(BAR0_0 + regs::DMA_COUNT), Ok(1));
}
