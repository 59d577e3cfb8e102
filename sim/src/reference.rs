//! The reference experiment of shared/REFERENCE.md, on a simulated weft fabric.
//!
//! Two hosts, four GPUs and one NVMe drive with SR-IOV behind weft. The
//! GPUs start bound to host 1 (index 0 here), which measures GPU
//! peer-to-peer bandwidth across the fabric, one way and both ways at once,
//! and latency ([`P2pFigures`] defines each figure); two GPUs are then
//! unbound and bound to host 2, which discovers them through hot-plug with
//! its standard drivers and measures the same; finally one NVMe virtual
//! function is bound to each host, and each host writes and reads it back.
//!
//! Like the published setup, the fabric has four switches ([`TOPOLOGY`]):
//! the hosts sit on the manager's switch and the endpoints on the other
//! three, so every GPU copy crosses fabric links. The drive's two VFs share
//! its endpoint port, each owned by its own host. Each step reports what
//! happened and the simulated time it took.

use std::fmt;
use std::time::Duration;

use serde::{Serialize, Serializer};

use weft_devices::gpu::{Gpu, GpuConfig};
use weft_devices::nvme::{Nvme, NvmeConfig};
use weft_fabric::binding::UnbindMode;
use weft_fabric::inventory::FunctionKind;
use weft_fabric::manager::FabricManager;
use weft_fabric::settings::{FabricSettings, HostPort};
use weft_pcie::config::FunctionIdentity;
use weft_pcie::link::{Link, LinkSpeed, LinkWidth};
use weft_pcie::Bdf;
use weft_regs::tables::{HostIndex, PortIndex};

use crate::host::{Host, HostConfig, Location};
use crate::link::LinkConfig;
use crate::wiring::Place;
use crate::world::World;

/// Vendor ID the virtual switch ports report. weft has no PCI-SIG Vendor ID
/// of its own; a board that ships sets the one it owns.
pub const VIRTUAL_SWITCH_VENDOR: u16 = 0x1d1d;

/// Every link of the experiment: PCIe Gen3 x16 (the class of the published figures).
pub const LINK: Link = Link::new(LinkSpeed::Gen3, LinkWidth::X16);

/// Link latency: PHY and data link layer at both ends plus a short cable.
pub const LINK_LATENCY_PS: u64 = 100_000;

/// What a run may vary.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct ReferenceConfig {
    /// Bytes each GPU copy moves when bandwidth is measured (each direction
    /// of a bidirectional measurement moves this much).
    pub copy_bytes: u64,
    /// Bytes of the small transfers latency is measured with.
    pub latency_bytes: u64,
}

impl Default for ReferenceConfig {
    /// 16 MiB copies, long enough that the copy's start and end cost under
    /// 1%; 64-byte transfers for latency.
    fn default() -> Self {
        ReferenceConfig {
            copy_bytes: 16 << 20,
            latency_bytes: 64,
        }
    }
}

/// The fabric the experiment runs on, as the report describes it: where
/// everything sits, and the fabric links each host's GPU copy crosses
/// (shortest paths, ties to the neighbour with the lower switch ID).
pub const TOPOLOGY: [&str; 2] = [
    "ring S0-S1-S2-S3-S0; hosts on S0 (the fabric manager's), \
     GPUs 1 and 4 on S1, GPU 2 and the NVMe drive on S2, GPU 3 on S3",
    "GPU copies A -> B (and back): host 1 GPU 1 -> GPU 2 over S1-S2, \
     host 2 GPU 3 -> GPU 4 over S3-S0-S1",
];

/// A published GPU peer-to-peer figure (shared/REFERENCE.md), in decimal
/// GB/s and microseconds; `None` where the source gives none.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Published {
    /// Who published it.
    pub source: &'static str,
    /// The configuration it applies to.
    pub setup: &'static str,
    /// Unidirectional bandwidth, GB/s.
    pub unidirectional_gb_s: Option<f64>,
    /// Bidirectional bandwidth (both directions together), GB/s.
    pub bidirectional_gb_s: Option<f64>,
    /// Bandwidth whose direction the source does not state, GB/s.
    pub direction_not_stated_gb_s: Option<f64>,
    /// Latency, µs.
    pub latency_us: Option<f64>,
}

/// The published figures the report compares with (shared/REFERENCE.md).
pub const PUBLISHED: [Published; 3] = [
    Published {
        source: "Switchtec PAX",
        setup: "four PAX fabric switches, two hosts, M40 GPUs, Gen3 x16, CUDA P2P bandwidth test",
        unidirectional_gb_s: Some(12.8),
        bidirectional_gb_s: Some(24.9),
        direction_not_stated_gb_s: None,
        latency_us: None,
    },
    Published {
        source: "Liqid, P2P",
        setup: "GPUs in a Liqid expansion chassis behind a Dell PowerEdge MX7000, P2P inside the chassis",
        unidirectional_gb_s: None,
        bidirectional_gb_s: None,
        direction_not_stated_gb_s: Some(25.01),
        latency_us: Some(3.1),
    },
    Published {
        source: "Liqid, through the CPU",
        setup: "the same chassis without P2P: traffic crosses the server CPU's root complex",
        unidirectional_gb_s: None,
        bidirectional_gb_s: None,
        direction_not_stated_gb_s: Some(8.59),
        latency_us: Some(33.65),
    },
];

/// Switch IDs of S0 (the manager's) to S3, as their identity VSECs carry them.
const SWITCH_IDS: [u64; 4] = [
    0x5745_4654_0000_0000,
    0x5745_4654_0000_0001,
    0x5745_4654_0000_0002,
    0x5745_4654_0000_0003,
];
/// Each switch's port cabled to the next switch round the ring, and the
/// next switch's port that receives the cable: S(i).6 — S(i+1).7.
const RING_PORTS: (u8, u8) = (6, 7);
/// The hosts' ports, on S0.
pub const HOST_PORTS: [u8; 2] = [0, 1];
/// GPUs 1 to 4 in binding order: host 1 copies from GPU 1 (S1) to GPU 2
/// (S2) across the S1–S2 link; host 2 from GPU 3 (S3) to GPU 4 (S1),
/// two fabric links apart.
const GPU_PORTS: [Place; 4] = [
    Place::new(1, 0),
    Place::new(2, 0),
    Place::new(3, 0),
    Place::new(1, 1),
];
const NVME_PORT: Place = Place::new(2, 1);
/// Ports of each switch.
pub const PORTS: usize = 8;
const SLOTS_PER_HOST: u8 = 4;
const NUM_VFS: u16 = 4;

/// What went wrong, at which step.
#[derive(Debug)]
pub struct ReferenceError {
    /// The step that failed.
    pub step: &'static str,
    /// Why.
    pub why: String,
}

impl fmt::Display for ReferenceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.step, self.why)
    }
}

impl std::error::Error for ReferenceError {}

fn at<T, E: fmt::Debug>(step: &'static str, result: Result<T, E>) -> Result<T, ReferenceError> {
    result.map_err(|err| ReferenceError {
        step,
        why: format!("{err:?}"),
    })
}

/// Serializes a duration as whole nanoseconds.
fn nanos<S: Serializer>(duration: &Duration, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_u64(u64::try_from(duration.as_nanos()).unwrap_or(u64::MAX))
}

/// One step of the run and what it showed.
#[derive(Clone, Debug, Serialize)]
pub struct Step {
    /// What was done.
    pub what: String,
    /// What it showed.
    pub outcome: String,
    /// Simulated time when it ended.
    #[serde(rename = "at_ns", serialize_with = "nanos")]
    pub at: Duration,
}

/// GPU peer-to-peer figures measured on one host, between its first two
/// GPUs (A and B, in bus order) on different switches.
///
/// - Unidirectional: A copies [`ReferenceConfig::copy_bytes`] from its
///   memory into B's memory BAR; bytes over the time from the CPU writing
///   the doorbell to the CPU seeing the completion MSI.
/// - Bidirectional: A → B and B → A started back to back and running at
///   once; total bytes (both directions) over the time from the first
///   doorbell until the MSIs of both copies have arrived.
/// - Peer read round trip (the P2P latency figure): A's engine reads
///   [`ReferenceConfig::latency_bytes`] from B's memory BAR; the time from
///   A's read request leaving A to its completion arriving back at A, on
///   A's own clock (its DMA_ELAPSED_NS register).
/// - Host read round trip (the same path through a host, for comparison
///   with a copy through the CPU): A's engine reads as many bytes of the
///   host's memory, timed the same way.
/// - Peer write, doorbell to MSI: A writes as many bytes into B's memory
///   BAR; the time from the CPU writing the doorbell to the CPU seeing the
///   completion MSI, so it includes the host–GPU path both ways.
#[derive(Clone, Debug, Default, Serialize)]
pub struct P2pFigures {
    /// The host measuring, "host 1" or "host 2".
    pub host: String,
    /// Unidirectional A → B copy, bytes per second.
    #[serde(rename = "unidirectional_bytes_per_s")]
    pub unidirectional: f64,
    /// A → B and B → A at once, total bytes per second.
    #[serde(rename = "bidirectional_bytes_per_s")]
    pub bidirectional: f64,
    /// Peer read round trip on A's clock.
    #[serde(rename = "peer_read_round_trip_ns", serialize_with = "nanos")]
    pub peer_read: Duration,
    /// Read of host memory, round trip on A's clock.
    #[serde(rename = "host_read_round_trip_ns", serialize_with = "nanos")]
    pub host_read: Duration,
    /// Small peer write, doorbell to MSI as the CPU sees it.
    #[serde(rename = "peer_write_doorbell_to_msi_ns", serialize_with = "nanos")]
    pub peer_write: Duration,
}

/// Everything the run measured.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Report {
    /// The configuration run.
    pub config: ReferenceConfig,
    /// Bytes that left a host port while the GPUs copied peer to peer
    /// (unidirectional and bidirectional bandwidth runs): none, when
    /// peer-to-peer stays inside the fabric.
    pub p2p_bytes_through_hosts: u64,
    /// The steps in order.
    pub steps: Vec<Step>,
    /// GPU peer-to-peer figures: host 1, then host 2 after the rebind.
    pub p2p: Vec<P2pFigures>,
    /// Each host's device tree at the end, as `lspci -tv` would print it.
    pub trees: Vec<(String, String)>,
}

fn identity(device_id: u16) -> FunctionIdentity {
    FunctionIdentity {
        vendor_id: VIRTUAL_SWITCH_VENDOR,
        device_id,
        revision_id: 0,
        class_code: 0x06_04_00,
    }
}

fn link() -> LinkConfig {
    LinkConfig {
        link: LINK,
        latency_ps: LINK_LATENCY_PS,
    }
}

/// Builds the fabric: four switches in a ring, the manager on S0, two
/// hosts, four GPUs and an NVMe drive.
fn build() -> Result<World, ReferenceError> {
    let mut settings = FabricSettings {
        switch_id: SWITCH_IDS[0],
        num_vfs: NUM_VFS,
        upstream_identity: identity(0x0001),
        downstream_identity: identity(0x0002),
        ..FabricSettings::default()
    };
    for (index, port) in HOST_PORTS.iter().enumerate() {
        let host = HostPort {
            switch: SWITCH_IDS[0],
            port: PortIndex(*port),
            host: HostIndex(index as u16),
            slots: SLOTS_PER_HOST,
        };
        at(
            "configure",
            settings.hosts.push(host).map_err(|_| "too many host ports"),
        )?;
    }
    let manager = at("configure", FabricManager::new(settings))?;
    let mut world = World::new(PORTS, manager);
    for id in &SWITCH_IDS[1..] {
        world.add_switch(*id, PORTS);
    }
    for switch in 0..SWITCH_IDS.len() {
        let next = (switch + 1) % SWITCH_IDS.len();
        world.connect(
            Place::new(switch, RING_PORTS.0),
            Place::new(next, RING_PORTS.1),
            link(),
        );
    }
    for port in HOST_PORTS {
        world.attach_host(port, Host::new(HostConfig::default()), link());
    }
    for port in GPU_PORTS {
        let gpu = at("build GPUs", Gpu::new(GpuConfig::default()))?;
        world.attach_device_at(port, Box::new(gpu), link());
    }
    let nvme = at(
        "build the NVMe drive",
        Nvme::new(NvmeConfig {
            total_vfs: NUM_VFS,
            ..NvmeConfig::default()
        }),
    )?;
    world.attach_device_at(NVME_PORT, Box::new(nvme), link());
    Ok(world)
}

/// Fabric IDs the manager gave the physical functions at `place`, and the VFs there.
fn functions_on(world: &World, place: Place) -> (Vec<Bdf>, Vec<Bdf>) {
    let inventory = world.manager().inventory();
    // The manager numbers switches in discovery order; the world by index.
    let switch = world
        .switches()
        .get(place.switch)
        .and_then(|s| inventory.switch_index(s.id()));
    let on_port = inventory
        .functions
        .iter()
        .filter(|f| Some(f.switch) == switch && f.port == PortIndex(place.port));
    let (mut pfs, mut vfs) = (Vec::new(), Vec::new());
    for function in on_port {
        match function.kind {
            FunctionKind::Physical => pfs.push(function.id),
            FunctionKind::Virtual { .. } => vfs.push(function.id),
        }
    }
    (pfs, vfs)
}

/// The GPUs a host's drivers are bound to, in bus order.
fn host_gpus(world: &mut World, port: u8) -> Vec<Bdf> {
    world.with_host(port, |host, _| {
        host.drivers()
            .iter()
            .filter(|(bdf, _)| host.gpu(**bdf).is_some())
            .map(|(bdf, _)| *bdf)
            .collect()
    })
}

/// Measures [`P2pFigures`] between the first two GPUs of the host at
/// `port`, as the CUDA P2P bandwidth and latency test does, and returns
/// them with the bytes that meanwhile left any host port during the
/// bandwidth runs beyond a few control TLPs (register accesses, MSIs) — a
/// copy through a host would show there.
fn p2p_measure(
    world: &mut World,
    port: u8,
    config: ReferenceConfig,
    step: &'static str,
) -> Result<(P2pFigures, u64), ReferenceError> {
    let gpus = host_gpus(world, port);
    let [a, b, ..] = gpus[..] else {
        return Err(ReferenceError {
            step,
            why: format!("the host has {} GPUs bound, needs 2", gpus.len()),
        });
    };
    let host_egress = |world: &World| -> u64 {
        HOST_PORTS
            .iter()
            .filter_map(|p| world.switch().counters(PortIndex(*p)))
            .map(|c| c.egress.bytes)
            .sum()
    };
    let len = config.copy_bytes;
    let small = config.latency_bytes;
    let before = host_egress(world);
    let mut figures = world.with_host(port, |host, link| {
        let peer = |host: &Host, bdf: Bdf, offset: u64| {
            host.gpu(bdf)
                .map(|gpu| gpu.peer_address(offset))
                .ok_or(ReferenceError {
                    step,
                    why: format!("no GPU driver on {bdf}"),
                })
        };
        // A's memory from 0 is the source of A's copies, B's likewise;
        // each copy lands at `len` in the other GPU.
        let (a_in, b_in) = (peer(host, a, len)?, peer(host, b, len)?);
        let uni = at(
            step,
            host.gpu_copy(link, a, Location::Local(0), Location::Bus(b_in), len),
        )?;
        let forth = at(
            step,
            host.gpu_copy_start(link, a, Location::Local(0), Location::Bus(b_in), len),
        )?;
        let back = at(
            step,
            host.gpu_copy_start(link, b, Location::Local(0), Location::Bus(a_in), len),
        )?;
        let (done, _) = at(step, host.gpu_copy_finish_all(link, &[forth, back]))?;
        let both = done.saturating_sub(forth.started.min(back.started));
        Ok::<_, ReferenceError>(P2pFigures {
            unidirectional: uni.bytes_per_second(),
            bidirectional: if both.is_zero() {
                f64::INFINITY
            } else {
                (2 * len) as f64 / both.as_secs_f64()
            },
            ..P2pFigures::default()
        })
    })?;
    // Register accesses and the completion MSIs cross the host port; the
    // copied data must not. Count only what exceeds a few control TLPs.
    let through_hosts = host_egress(world) - before;
    let leaked = if through_hosts > 3 * CONTROL_BYTES {
        through_hosts
    } else {
        0
    };
    world.with_host(port, |host, link| {
        let scratch = 2 * len;
        let b_memory = host
            .gpu(b)
            .map(|gpu| gpu.peer_address(0))
            .ok_or(ReferenceError {
                step,
                why: format!("no GPU driver on {b}"),
            })?;
        let read = at(
            step,
            host.gpu_copy(
                link,
                a,
                Location::Bus(b_memory),
                Location::Local(scratch),
                small,
            ),
        )?;
        let buffer = at(step, host.allocate_dma(small))?;
        let host_read = at(
            step,
            host.gpu_copy(
                link,
                a,
                Location::Bus(buffer),
                Location::Local(scratch),
                small,
            ),
        )?;
        let write = at(
            step,
            host.gpu_copy(
                link,
                a,
                Location::Local(scratch),
                Location::Bus(b_memory + scratch),
                small,
            ),
        )?;
        figures.peer_read = read.engine;
        figures.host_read = host_read.engine;
        figures.peer_write = write.elapsed;
        Ok::<_, ReferenceError>(())
    })?;
    Ok((figures, leaked))
}

/// `bytes` in MiB or KiB, whichever is whole.
fn size(bytes: u64) -> String {
    if bytes >= 1 << 20 && bytes.is_multiple_of(1 << 20) {
        format!("{} MiB", bytes >> 20)
    } else {
        format!("{} KiB", bytes >> 10)
    }
}

/// Host-port traffic of starting and finishing one copy: the completions
/// of the status and timer reads, and the MSI — a few hundred bytes.
const CONTROL_BYTES: u64 = 4096;

/// Lets slot interrupts reach the hosts, as time passes between a
/// management command and the host's interrupt handler.
pub fn let_interrupts_arrive(world: &mut World) {
    world.run_until(world.now() + INTERRUPT_DELIVERY);
}

/// Long enough for the firmware's MSI to cross the switch and its link.
const INTERRUPT_DELIVERY: Duration = Duration::from_micros(50);

/// The fabric of the experiment after its first steps, ready to be managed:
/// enumerated, the four GPUs bound to host 1 (slots 0 to 3), both hosts
/// booted with their drivers loaded. The NVMe drive and its VFs are free.
pub fn virtual_board() -> Result<World, ReferenceError> {
    let mut world = build()?;
    at("enumerate the fabric", world.start_manager())?;
    let gpus: Vec<Bdf> = GPU_PORTS
        .iter()
        .flat_map(|&port| functions_on(&world, port).0)
        .collect();
    for (slot, gpu) in gpus.iter().enumerate() {
        at(
            "bind the GPUs to host 1",
            world.with_manager(|m, s, h| m.bind(*gpu, HostIndex(0), slot as u8, s, h)),
        )?;
    }
    for port in HOST_PORTS {
        at(
            "hosts boot",
            world.with_host(port, |host, link| host.boot(link)),
        )?;
    }
    Ok(world)
}

/// Runs the whole experiment.
pub fn run(config: ReferenceConfig) -> Result<Report, ReferenceError> {
    let mut steps = Vec::new();
    let mut p2p = Vec::new();
    let mut p2p_bytes_through_hosts = 0;
    let mut world = build()?;
    let mut note = |world: &World, what: String, outcome: String| {
        steps.push(Step {
            what,
            outcome,
            at: world.now(),
        });
    };

    at("enumerate the fabric", world.start_manager())?;
    let gpus: Vec<Bdf> = GPU_PORTS
        .iter()
        .flat_map(|&port| functions_on(&world, port).0)
        .collect();
    let (nvme_pf, vfs) = functions_on(&world, NVME_PORT);
    note(
        &world,
        "fabric manager enumerates the fabric".into(),
        format!(
            "{} GPUs, {} NVMe PF with {} VFs",
            gpus.len(),
            nvme_pf.len(),
            vfs.len()
        ),
    );

    for (slot, gpu) in gpus.iter().enumerate() {
        at(
            "bind the GPUs to host 1",
            world.with_manager(|m, s, h| m.bind(*gpu, HostIndex(0), slot as u8, s, h)),
        )?;
    }
    for (index, port) in HOST_PORTS.iter().enumerate() {
        let bound = at(
            "hosts boot",
            world.with_host(*port, |host, link| host.boot(link)),
        )?;
        note(
            &world,
            format!("host {} boots and enumerates", index + 1),
            format!("{} drivers bound", bound.len()),
        );
    }

    let (figures, leaked) = p2p_measure(
        &mut world,
        HOST_PORTS[0],
        config,
        "GPU peer-to-peer on host 1",
    )?;
    p2p_bytes_through_hosts += leaked;
    note_p2p(&mut note, &world, "host 1", &figures, config);
    p2p.push(P2pFigures {
        host: "host 1".into(),
        ..figures
    });

    for gpu in &gpus[2..] {
        at(
            "unbind two GPUs",
            world.with_manager(|m, s, h| m.unbind(*gpu, UnbindMode::Graceful, s, h)),
        )?;
    }
    let_interrupts_arrive(&mut world);
    let removed = at(
        "host 1 handles the unplug",
        world.with_host(HOST_PORTS[0], |host, link| host.service_interrupts(link)),
    )?;
    note(
        &world,
        "unbind 2 GPUs from host 1".into(),
        format!("host 1 handled {} slot events", removed.len()),
    );
    for (slot, gpu) in gpus[2..].iter().enumerate() {
        at(
            "bind two GPUs to host 2",
            world.with_manager(|m, s, h| m.bind(*gpu, HostIndex(1), slot as u8, s, h)),
        )?;
    }
    let_interrupts_arrive(&mut world);
    let added = at(
        "host 2 handles the plug",
        world.with_host(HOST_PORTS[1], |host, link| host.service_interrupts(link)),
    )?;
    let host2_gpus = host_gpus(&mut world, HOST_PORTS[1]).len();

    note(
        &world,
        "bind them to host 2".into(),
        format!(
            "host 2 handled {} slot events, has {host2_gpus} GPUs with its standard driver",
            added.len()
        ),
    );
    let (figures, leaked) = p2p_measure(
        &mut world,
        HOST_PORTS[1],
        config,
        "GPU peer-to-peer on host 2",
    )?;
    p2p_bytes_through_hosts += leaked;
    note_p2p(&mut note, &world, "host 2", &figures, config);
    p2p.push(P2pFigures {
        host: "host 2".into(),
        ..figures
    });

    for (index, port) in HOST_PORTS.iter().enumerate() {
        let vf = *vfs.get(index).ok_or(ReferenceError {
            step: "bind NVMe VFs",
            why: "too few VFs".into(),
        })?;
        let slot = SLOTS_PER_HOST - 1;
        let host = HostIndex(index as u16);
        // Each VF gets its own owner on the drive's port, so the second
        // host's VF binds beside the first host's.
        at(
            "bind NVMe VFs",
            world.with_manager(|m, s, h| m.bind(vf, host, slot, s, h)),
        )?;
        let_interrupts_arrive(&mut world);
        at(
            "hosts find their VF",
            world.with_host(*port, |host, link| host.service_interrupts(link)),
        )?;
        let pattern: Vec<u8> = (0..64 * 1024).map(|i| (i * 7 + index) as u8).collect();
        let read = world.with_host(*port, |host, link| {
            let nvme = host
                .drivers()
                .keys()
                .copied()
                .find(|bdf| host.nvme(*bdf).is_some())
                .ok_or(ReferenceError {
                    step: "NVMe on a VF",
                    why: "no NVMe driver bound".into(),
                })?;
            at("NVMe write", host.nvme_write(link, nvme, 0, &pattern))?;
            at(
                "NVMe read",
                host.nvme_read(link, nvme, 0, pattern.len() as u64),
            )
        })?;
        if read != pattern {
            return Err(ReferenceError {
                step: "NVMe on a VF",
                why: "read data differs from written".into(),
            });
        }
        note(
            &world,
            format!("host {}: bind NVMe VF {vf}, write + read", index + 1),
            "64 KiB written and read back intact".into(),
        );
    }

    let mut trees = Vec::new();
    for (index, port) in HOST_PORTS.iter().enumerate() {
        let tree = world.with_host(*port, |host, _| host.tree().lspci_tree());
        trees.push((format!("host {}", index + 1), tree));
    }
    Ok(Report {
        config,
        p2p_bytes_through_hosts,
        steps,
        p2p,
        trees,
    })
}

/// Notes the steps of one host's peer-to-peer measurement.
fn note_p2p(
    note: &mut impl FnMut(&World, String, String),
    world: &World,
    host: &str,
    figures: &P2pFigures,
    config: ReferenceConfig,
) {
    let copy = size(config.copy_bytes);
    let small = config.latency_bytes;
    note(
        world,
        format!("{host}: GPU A -> B copy of {copy}"),
        format!("{:.2} GB/s", figures.unidirectional / 1e9),
    );
    note(
        world,
        format!("{host}: GPU A -> B and B -> A at once, {copy} each"),
        format!("{:.2} GB/s total", figures.bidirectional / 1e9),
    );
    note(
        world,
        format!("{host}: {small} B peer read / host read / peer write"),
        format!(
            "{} / {} round trip, {} doorbell to MSI",
            micros(figures.peer_read),
            micros(figures.host_read),
            micros(figures.peer_write)
        ),
    );
}

/// `duration` in microseconds, with two decimals and the unit.
pub fn micros(duration: Duration) -> String {
    format!("{:.2} µs", duration.as_secs_f64() * 1e6)
}
