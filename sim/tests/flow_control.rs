//! Credit-based flow control (PCIe Base 6.0 §2.6.1) in the running world:
//! a receiver that returns credits slowly throttles its sender to what the
//! credits allow, and nothing is lost or reordered meanwhile.

use std::path::Path;
use std::time::Duration;

use weft_pcie::tlp::FlowControlClass;
use weft_sim::host::Location;
use weft_sim::link::{ClassCredits, Credits};
use weft_sim::scenario::engine::Engine;
use weft_sim::scenario::Scenario;
use weft_sim::wiring::Place;
use weft_sim::world::{CreditError, Receiver, World};

/// One switch, a host on port 0 and a GPU on port 1, Gen3 x16, 100 ns links.
const FABRIC: &str = include_str!("scenarios/host_and_gpu.toml");

const HOST_PORT: u8 = 0;
const LINK_LATENCY: Duration = Duration::from_nanos(100);
const COPY: usize = 64 << 10;
/// The payload of each of the GPU's writes: Max_Payload_Size 256.
const WRITE_BYTES: usize = 256;

/// The fabric, enumerated, the GPU bound and the host booted.
fn booted() -> World {
    let scenario = Scenario::parse(FABRIC, "host_and_gpu.toml", Path::new(".")).expect("valid");
    let mut engine = Engine::new(&scenario).expect("the fabric builds");
    for step in 0..scenario.steps.len() {
        engine.run_step(step).expect("the step runs");
    }
    engine.into_world()
}

/// The GPU copies `COPY` bytes of a pattern into host memory; returns the
/// copy's rate as the CPU saw it and what arrived in host memory.
fn copy_to_host(world: &mut World) -> (f64, Vec<u8>, Vec<u8>) {
    let pattern: Vec<u8> = (0..COPY).map(|i| (i * 31 + 7) as u8).collect();
    world.with_host(Place::new(0, HOST_PORT), |host, link| {
        let bdf = *host.drivers().keys().next().expect("the GPU driver");
        let driver = *host.gpu(bdf).expect("a GPU driver");
        let mut cpu = host.cpu(link);
        driver.upload(&mut cpu, 0, &pattern).expect("BAR writes");
        let buffer = host.allocate_dma(COPY as u64).expect("a DMA buffer");
        let stats = host
            .gpu_copy(
                link,
                bdf,
                Location::Local(0),
                Location::Bus(buffer),
                COPY as u64,
            )
            .expect("GPU to host");
        // The completion MSI is a posted write behind the data (§2.4.1):
        // once it has arrived, every byte must be in memory.
        let arrived = host.root().memory().read(buffer, COPY);
        (stats.bytes_per_second(), arrived, pattern)
    })
}

/// From a write arriving to its credit being usable again at the sender,
/// plus the next write's flight: the receiver's delay and two latencies.
fn round_trip(release: Duration) -> Duration {
    release + 2 * LINK_LATENCY
}

#[test]
fn a_slow_receiver_throttles_the_sender_without_losing_or_reordering() {
    let mut fast = booted();
    let (unthrottled, arrived, pattern) = copy_to_host(&mut fast);
    assert_eq!(arrived, pattern);

    // The host's root port advertises room for two 256-byte writes and
    // frees each buffer 2 µs after taking it in.
    let mut slow = booted();
    let release = Duration::from_micros(2);
    let two_writes = Credits {
        posted: ClassCredits {
            header: Some(2),
            data: Some((2 * WRITE_BYTES / 16) as u32),
        },
        ..Credits::ENDPOINT
    };
    let host = Receiver::Node(Place::new(0, HOST_PORT));
    slow.set_receiver_credits(host, two_writes, release)
        .expect("the host's link is wired and two writes fit");
    let (throttled, arrived, pattern) = copy_to_host(&mut slow);
    assert_eq!(
        arrived, pattern,
        "every byte arrived, each where it belongs"
    );
    assert_eq!(slow.tlps_lost(), 0);
    // Whatever is still on a link or waiting for credits gets through.
    slow.run_until(slow.now() + 10 * round_trip(release));
    assert_eq!(slow.tlps_in_flight(), 0, "nothing left waiting for credits");

    // §2.6.1: at most two writes are unacknowledged; each credit comes back
    // one release delay plus one link latency (the UpdateFC DLLP) after its
    // write arrived, and the write took at least a latency to arrive.
    let round_trip = round_trip(release);
    let ceiling = 2.0 * WRITE_BYTES as f64 / round_trip.as_secs_f64();
    assert!(
        throttled <= ceiling,
        "{throttled} B/s exceeds what two credits per {round_trip:?} allow ({ceiling} B/s)"
    );
    assert!(
        throttled > 0.8 * ceiling,
        "{throttled} B/s is far below the credit ceiling {ceiling} B/s"
    );
    assert!(
        unthrottled > 20.0 * throttled,
        "default credits ({unthrottled} B/s) should not throttle like two ({throttled} B/s)"
    );
}

#[test]
fn a_receiver_must_advertise_room_for_the_largest_tlp() {
    let mut world = booted();
    let host = Receiver::Node(Place::new(0, HOST_PORT));
    // 8 data credits are 128 bytes: a 256-byte write could never be sent.
    let too_few = Credits {
        posted: ClassCredits {
            header: Some(4),
            data: Some(8),
        },
        ..Credits::ENDPOINT
    };
    assert_eq!(
        world.set_receiver_credits(host, too_few, Duration::ZERO),
        Err(CreditError::TooFew {
            receiver: host,
            class: FlowControlClass::Posted
        })
    );
    let nowhere = Receiver::Node(Place::new(0, 3));
    assert_eq!(
        world.set_receiver_credits(nowhere, Credits::ENDPOINT, Duration::ZERO),
        Err(CreditError::NotWired(nowhere))
    );
}
