//! The reference experiment of shared/REFERENCE.md, on a simulated weft fabric.
//!
//! Two hosts, four GPUs and one NVMe drive with SR-IOV behind weft. The
//! GPUs start bound to host 1 (index 0 here), which measures GPU
//! peer-to-peer bandwidth across the fabric; two GPUs are then unbound and
//! bound to host 2, which discovers them through hot-plug with its standard
//! drivers and copies between them; finally one NVMe virtual function is
//! bound to each host, and each host writes and reads it back.
//!
//! Like the published setup, the fabric has four switches ([`TOPOLOGY`]):
//! the hosts sit on the manager's switch and the endpoints on the other
//! three, so every GPU copy crosses fabric links. The drive's two VFs share
//! its endpoint port, each owned by its own host. Each step reports what
//! happened and the simulated time it took.

use std::fmt;
use std::time::Duration;

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
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReferenceConfig {
    /// Bytes each GPU copy moves when bandwidth is measured.
    pub copy_bytes: u64,
}

impl Default for ReferenceConfig {
    /// 16 MiB copies: long enough that the copy's start and end cost under 1%.
    fn default() -> Self {
        ReferenceConfig {
            copy_bytes: 16 << 20,
        }
    }
}

/// The fabric the experiment runs on, as the report describes it: where
/// everything sits, and the fabric links each host's GPU copy crosses
/// (shortest paths, ties to the neighbour with the lower switch ID).
pub const TOPOLOGY: [&str; 2] = [
    "ring S0-S1-S2-S3-S0; hosts on S0 (the fabric manager's), \
     GPUs 1 and 4 on S1, GPU 2 and the NVMe drive on S2, GPU 3 on S3",
    "GPU copies: host 1 GPU 1 -> GPU 2 over S1-S2, host 2 GPU 3 -> GPU 4 over S3-S0-S1",
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

/// One step of the run and what it showed.
#[derive(Clone, Debug)]
pub struct Step {
    /// What was done.
    pub what: String,
    /// What it showed.
    pub outcome: String,
    /// Simulated time when it ended.
    pub at: Duration,
}

/// Everything the run measured.
#[derive(Clone, Debug, Default)]
pub struct Report {
    /// The configuration run.
    pub copy_bytes: u64,
    /// Bytes that left a host port while the GPUs copied peer to peer:
    /// none, when peer-to-peer stays inside the fabric.
    pub p2p_bytes_through_hosts: u64,
    /// The steps in order.
    pub steps: Vec<Step>,
    /// GPU peer-to-peer copy across the fabric, host 1, bytes per second.
    pub p2p_host1: f64,
    /// The same on host 2 after the rebind.
    pub p2p_host2: f64,
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

/// Copies `len` bytes from the first GPU's memory into the second's BAR
/// (peer-to-peer), as the CUDA P2P bandwidth test does, and returns bytes/s
/// and the bytes that meanwhile left any host port other than the copying
/// host's own (MSI, register reads) — a copy through a host would show there.
fn p2p_copy(
    world: &mut World,
    port: u8,
    len: u64,
    step: &'static str,
) -> Result<(f64, u64), ReferenceError> {
    let gpus = host_gpus(world, port);
    let [from, to, ..] = gpus[..] else {
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
    let before = host_egress(world);
    let rate = world.with_host(port, |host, link| {
        let peer = host.gpu(to).expect("bound above").peer_address(0);
        let stats = at(
            step,
            host.gpu_copy(link, from, Location::Local(0), Location::Bus(peer), len),
        )?;
        Ok(stats.bytes_per_second())
    })?;
    // Register accesses and the completion MSI cross the host port; the
    // copied data must not. Count only what exceeds a few control TLPs.
    let through_hosts = host_egress(world) - before;
    Ok((
        rate,
        if through_hosts > CONTROL_BYTES {
            through_hosts
        } else {
            0
        },
    ))
}

/// `bytes` in MiB or KiB, whichever is whole.
fn size(bytes: u64) -> String {
    if bytes >= 1 << 20 && bytes.is_multiple_of(1 << 20) {
        format!("{} MiB", bytes >> 20)
    } else {
        format!("{} KiB", bytes >> 10)
    }
}

/// Host-port traffic of starting and finishing one copy: register writes'
/// completions, status reads and the MSI — a few hundred bytes.
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
    let mut report = Report {
        copy_bytes: config.copy_bytes,
        ..Report::default()
    };
    let mut world = build()?;
    let mut note = |world: &World, what: String, outcome: String| {
        report.steps.push(Step {
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

    let (p2p_host1, leaked) = p2p_copy(
        &mut world,
        HOST_PORTS[0],
        config.copy_bytes,
        "GPU peer-to-peer on host 1",
    )?;
    report.p2p_host1 = p2p_host1;
    report.p2p_bytes_through_hosts += leaked;
    note(
        &world,
        format!("host 1: GPU to GPU copy of {}", size(config.copy_bytes)),
        format!("{:.2} GB/s", p2p_host1 / 1e9),
    );

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
    let (p2p_host2, leaked) = p2p_copy(
        &mut world,
        HOST_PORTS[1],
        config.copy_bytes,
        "GPU peer-to-peer on host 2",
    )?;
    report.p2p_host2 = p2p_host2;
    report.p2p_bytes_through_hosts += leaked;
    note(
        &world,
        format!("host 2: GPU to GPU copy of {}", size(config.copy_bytes)),
        format!("{:.2} GB/s", p2p_host2 / 1e9),
    );

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

    for (index, port) in HOST_PORTS.iter().enumerate() {
        let tree = world.with_host(*port, |host, _| host.tree().lspci_tree());
        report.trees.push((format!("host {}", index + 1), tree));
    }
    Ok(report)
}
