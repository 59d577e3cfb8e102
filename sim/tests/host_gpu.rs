//! The GPU driver: host → GPU → host round trip with the data checked, and
//! a GPU → GPU peer copy to the peer BAR the host's enumeration assigned,
//! turned around in the switch without touching host memory.

mod host_support;

use host_support::{Model, Wire};
use weft_pcie::Bdf;
use weft_sim::host::{Host, HostConfig, Location};

const GPU0: Bdf = Bdf::new(3, 0, 0);
const GPU1: Bdf = Bdf::new(4, 0, 0);
/// Gen3 x16 after encoding (REFERENCE.md): no copy may beat it.
const GEN3_X16: f64 = 15.75e9;

fn booted() -> (Host, Wire) {
    let mut wire = Wire::new(2);
    wire.plug(0, Model::gpu());
    wire.plug(1, Model::gpu());
    let mut host = Host::new(HostConfig::default());
    host.boot(&mut wire).expect("boot");
    (host, wire)
}

fn pattern(len: usize, seed: u8) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed))
        .collect()
}

#[test]
fn host_to_gpu_to_host_round_trip() {
    let (mut host, mut wire) = booted();
    let len = 512 << 10;
    let data = pattern(len, 7);
    let src = host.allocate_dma(len as u64).expect("DMA buffer");
    let dst = host.allocate_dma(len as u64).expect("DMA buffer");
    host.root_mut().memory_mut().write(src, &data);

    let up = host
        .gpu_copy(
            &mut wire,
            GPU0,
            Location::Bus(src),
            Location::Local(0x10_0000),
            len as u64,
        )
        .expect("host to GPU");
    assert_eq!(wire.gpu(0).memory().read(0x10_0000, len), data);
    let down = host
        .gpu_copy(
            &mut wire,
            GPU0,
            Location::Local(0x10_0000),
            Location::Bus(dst),
            len as u64,
        )
        .expect("GPU to host");
    assert_eq!(host.root().memory().read(dst, len), data);

    for stats in [up, down] {
        println!(
            "{} bytes in {:?}: {:.2} GB/s",
            stats.bytes,
            stats.elapsed,
            stats.bytes_per_second() / 1e9
        );
        assert_eq!(stats.bytes, len as u64);
        assert!(stats.bytes_per_second() > 1e9, "{stats:?}");
        assert!(stats.bytes_per_second() < GEN3_X16, "{stats:?}");
    }
}

#[test]
fn gpu_to_gpu_peer_copy_uses_the_peer_bar() {
    let (mut host, mut wire) = booted();
    let len = 256 << 10;
    let data = pattern(len, 99);
    let gpu0 = *host.gpu(GPU0).expect("GPU0");
    let gpu1 = *host.gpu(GPU1).expect("GPU1");
    {
        let mut cpu = host.cpu(&mut wire);
        gpu0.upload(&mut cpu, 0, &data)
            .expect("upload through BAR1");
    }
    // The peer's address comes from this host's enumeration: BAR1 of 04:00.0.
    assert_eq!(gpu1.peer_address(0x2000), 0x81_0000_2000);
    let before = host.root().counters();
    let stats = host
        .gpu_copy(
            &mut wire,
            GPU0,
            Location::Local(0),
            Location::Bus(gpu1.peer_address(0x2000)),
            len as u64,
        )
        .expect("peer copy");
    assert_eq!(wire.gpu(1).memory().read(0x2000, len), data);
    let after = host.root().counters();
    assert_eq!(
        after.dma_written, before.dma_written,
        "no data through host memory"
    );
    assert!(wire.peer_to_peer >= (len / 256) as u64);
    assert!(stats.bytes_per_second() < GEN3_X16);
    // And back, read through BAR1 by the CPU.
    let mut cpu = host.cpu(&mut wire);
    assert_eq!(
        gpu1.download(&mut cpu, 0x2000, 4096).expect("download"),
        data[..4096]
    );
}

#[test]
fn peer_copies_both_ways_at_once_land_intact() {
    let (mut host, mut wire) = booted();
    let len = 64 << 10;
    let forth_data = pattern(len, 3);
    let back_data = pattern(len, 5);
    let gpu0 = *host.gpu(GPU0).expect("GPU0");
    let gpu1 = *host.gpu(GPU1).expect("GPU1");
    {
        let mut cpu = host.cpu(&mut wire);
        gpu0.upload(&mut cpu, 0, &forth_data).expect("upload");
        gpu1.upload(&mut cpu, 0, &back_data).expect("upload");
    }
    let forth = host
        .gpu_copy_start(
            &mut wire,
            GPU0,
            Location::Local(0),
            Location::Bus(gpu1.peer_address(0x10_0000)),
            len as u64,
        )
        .expect("start GPU0 -> GPU1");
    let back = host
        .gpu_copy_start(
            &mut wire,
            GPU1,
            Location::Local(0),
            Location::Bus(gpu0.peer_address(0x10_0000)),
            len as u64,
        )
        .expect("start GPU1 -> GPU0");
    // The wire carries one packet at a time, so the copies share it; the
    // reference experiment measures them running at once on real links.
    assert!(back.started >= forth.started);
    let (done, stats) = host
        .gpu_copy_finish_all(&mut wire, &[forth, back])
        .expect("both finish");
    assert_eq!(wire.gpu(1).memory().read(0x10_0000, len), forth_data);
    assert_eq!(wire.gpu(0).memory().read(0x10_0000, len), back_data);
    for stats in &stats {
        assert!(stats.finished <= done + std::time::Duration::from_micros(5));
        assert!(stats.engine > std::time::Duration::ZERO);
    }
    // A finished ticket handed to the other GPU is refused.
    let ticket = host
        .gpu_copy_start(
            &mut wire,
            GPU0,
            Location::Local(0),
            Location::Local(0x20_0000),
            4096,
        )
        .expect("local copy");
    let gpu1 = *host.gpu(GPU1).expect("GPU1");
    let mut cpu = host.cpu(&mut wire);
    assert!(gpu1.finish(&mut cpu, ticket).is_err());
    let gpu0 = *host.gpu(GPU0).expect("GPU0");
    let mut cpu = host.cpu(&mut wire);
    assert_eq!(gpu0.finish(&mut cpu, ticket).map(|s| s.bytes), Ok(4096));
}
