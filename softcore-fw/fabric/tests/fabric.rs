//! The fabric manager against the transaction-level switch and endpoint
//! models: enumeration, the virtual switch as a host's OS sees it, binding,
//! hot-plug and isolation. Every expected ID and address is worked out by
//! hand below from the bus plan, the BAR sizes and the alignment rules.

mod common;

use common::*;
use weft_fabric::binding::{BindError, SharingRefused, UnbindMode, Unbinding};
use weft_fabric::hw::FabricConfig;
use weft_fabric::inventory::{Binding, FunctionKind, PortKind, SwitchIndex};
use weft_fabric::manager::FabricManager;
use weft_fabric::pcie::config::msi::MsiMessage;
use weft_fabric::pcie::config::pcie_cap::{slot_control, slot_status};
use weft_fabric::pcie::config::{ext_cap_id, Bar};
use weft_fabric::pcie::tlp::{Body, CompletionStatus, ConfigType, MemoryOp};
use weft_fabric::pcie::Bdf;
use weft_fabric::settings::{FabricSettings, HostPort};
use weft_fabric::virtualize::FORWARDED_TIMEOUT_NS;
use weft_model::{Destination, DropReason, PortIndex as ModelPort, PortRole};
use weft_regs::tables::{HostIndex, PortIndex};

const PORTS: usize = 8;
const HOST0: u8 = 0;
const HOST1: u8 = 1;
const GPU: u8 = 2;
const NVME: u8 = 3;
const MULTI: u8 = 4;
const ARI: u8 = 5;

const GPU_VENDOR: u16 = 0x10de;
const NVME_VENDOR: u16 = 0x144d;
const SWITCH_IDENTITY_VENDOR: u16 = 0x1d1d;

/// The bus plan: 0 the manager, 1 and 2 the hosts' proxies (configuration
/// order; host 1's is bus 2), then one bus per endpoint port in port order, plus the VFs' extra bus.
const PROXY0: Bdf = Bdf::new(1, 0, 0);
const GPU_ID: Bdf = Bdf::new(3, 0, 0);
const NVME_PF: Bdf = Bdf::new(4, 0, 0);
/// §9.3.3.9-10: VF n = PF RID + First VF Offset (0x80) + (n - 1) × VF Stride (0x40).
const NVME_VF1: Bdf = Bdf(0x0480);
const NVME_VF2: Bdf = Bdf(0x04c0);
const NVME_VF3: Bdf = Bdf(0x0500); // bus 5: the port's range grows to 4..=5
const MULTI_F0: Bdf = Bdf::new(6, 0, 0);
const MULTI_F1: Bdf = Bdf::new(6, 0, 1);
const ARI_F0: Bdf = Bdf::new_ari(7, 0);
const ARI_F85: Bdf = Bdf::new_ari(7, 0x85);

/// Device readiness of the multi-function device: 300 ms after reset it
/// still answers Request Retry Status.
const MULTI_READY_NS: u64 = 300_000_000;

fn settings() -> FabricSettings {
    let mut s = FabricSettings {
        num_vfs: 3,
        ..FabricSettings::default()
    };
    s.upstream_identity = identity(SWITCH_IDENTITY_VENDOR, 0x0001, 0x06_04_00);
    s.downstream_identity = identity(SWITCH_IDENTITY_VENDOR, 0x0002, 0x06_04_00);
    for (port, host) in [(HOST0, 0), (HOST1, 1)] {
        s.hosts
            .push(HostPort {
                switch: s.switch_id,
                port: PortIndex(port),
                host: HostIndex(host),
                slots: 2,
            })
            .expect("room for two hosts");
    }
    s
}

fn devices(fabric: &mut FakeFabric) {
    // GPU: BAR0 32-bit 16 MiB, BAR1-2 64-bit prefetchable 256 MiB, BAR3-4 64-bit 64 KiB.
    fabric.devices[usize::from(GPU)] = Some(FakeDevice::new(vec![plain_function(
        0,
        identity(GPU_VENDOR, 0x2330, 0x03_02_00),
        [
            Some(Bar::memory32(16 << 20)),
            Some(Bar::memory64(256 << 20, true)),
            None,
            Some(Bar::memory64(64 << 10, false)),
            None,
            None,
        ],
        false,
    )]));
    // NVMe PF: BAR0-1 64-bit 16 KiB, SR-IOV with VF BAR0-1 64-bit 16 KiB per VF.
    fabric.devices[usize::from(NVME)] = Some(FakeDevice::new(vec![sriov_pf(
        identity(NVME_VENDOR, 0xa824, 0x01_08_02),
        [
            Some(Bar::memory64(16 << 10, false)),
            None,
            None,
            None,
            None,
            None,
        ],
        nvme_sriov(4),
    )]));
    // Two functions, each BAR0 32-bit 4 KiB, busy booting until 300 ms.
    let mf = identity(0x8086, 0x1521, 0x02_00_00);
    let mut multi = FakeDevice::new(vec![
        plain_function(
            0,
            mf,
            [Some(Bar::memory32(4 << 10)), None, None, None, None, None],
            true,
        ),
        plain_function(
            1,
            mf,
            [Some(Bar::memory32(4 << 10)), None, None, None, None, None],
            true,
        ),
    ]);
    multi.ready_at_ns = MULTI_READY_NS;
    fabric.devices[usize::from(MULTI)] = Some(multi);
    // ARI device: function 0 → 0x85 → end, each BAR0 32-bit 8 KiB.
    let ai = identity(0x15b3, 0x101e, 0x02_07_00);
    let mut ari = FakeDevice::new(vec![
        ari_function(
            0,
            0x85,
            ai,
            [Some(Bar::memory32(8 << 10)), None, None, None, None, None],
        ),
        ari_function(
            0x85,
            0,
            ai,
            [Some(Bar::memory32(8 << 10)), None, None, None, None, None],
        ),
    ]);
    ari.ari = true;
    fabric.devices[usize::from(ARI)] = Some(ari);
}

fn rig() -> Rig {
    let clock = Clock::default();
    let mut fabric = FakeFabric::new(PORTS, clock.clone());
    devices(&mut fabric);
    Rig {
        plane: ModelPlane::new(PORTS),
        fabric,
        clock,
        host: FakeHost::default(),
        manager: FabricManager::new(settings()).expect("valid settings"),
    }
}

fn started() -> Rig {
    let mut rig = rig();
    let mut clock = rig.clock.clone();
    rig.manager
        .start(&mut rig.fabric, &mut clock, &mut rig.plane.switch, 0)
        .expect("the fabric enumerates");
    rig
}

fn bar_addresses(rig: &Rig, id: Bdf) -> Vec<Option<u64>> {
    rig.manager
        .inventory()
        .function(id)
        .expect("enumerated")
        .bars
        .iter()
        .map(|b| b.fabric_address())
        .collect()
}

#[test]
fn enumeration_assigns_the_planned_ids_and_buses() {
    let rig = started();
    let inv = rig.manager.inventory();
    let ids: Vec<Bdf> = inv.functions.iter().map(|f| f.id).collect();
    assert_eq!(
        ids,
        [GPU_ID, NVME_PF, NVME_VF1, NVME_VF2, NVME_VF3, MULTI_F0, MULTI_F1, ARI_F0, ARI_F85]
    );
    assert_eq!(
        inv.port(PortIndex(HOST0)),
        PortKind::Host {
            host: HostIndex(0),
            proxy_id: PROXY0
        }
    );
    assert_eq!(
        inv.port(PortIndex(GPU)),
        PortKind::Endpoint { buses: (3, 3) }
    );
    assert_eq!(
        inv.port(PortIndex(NVME)),
        PortKind::Endpoint { buses: (4, 5) }
    );
    assert_eq!(
        inv.port(PortIndex(MULTI)),
        PortKind::Endpoint { buses: (6, 6) }
    );
    assert_eq!(
        inv.port(PortIndex(ARI)),
        PortKind::Endpoint { buses: (7, 7) }
    );
    assert_eq!(inv.port(PortIndex(6)), PortKind::Empty);
    // The data plane got the same.
    assert_eq!(
        rig.plane.role(NVME),
        PortRole::Endpoint {
            owner: None,
            buses: (4, 5)
        }
    );
}

#[test]
fn bars_are_placed_naturally_aligned_in_their_pools() {
    let rig = started();
    // Below 4 GiB from 0x8000_0000, in enumeration order:
    //   GPU BAR0 16 MiB           0x8000_0000
    //   GPU BAR3 64 KiB (64-bit, not prefetchable)  0x8100_0000
    //   NVMe BAR0 16 KiB          0x8101_0000
    //   NVMe VF BAR0 4 × 16 KiB   0x8101_4000 (16 KiB aligned; room for
    //                             TotalVFs, three enabled)
    //   multi f0, f1 4 KiB        0x8102_4000, 0x8102_5000
    //   ARI f0, f0x85 8 KiB       0x8102_6000, 0x8102_8000
    // 64-bit prefetchable from 0x40_0000_0000:
    //   GPU BAR1 256 MiB          0x40_0000_0000
    assert_eq!(
        bar_addresses(&rig, GPU_ID),
        [Some(0x8000_0000), Some(0x40_0000_0000), Some(0x8100_0000)]
    );
    assert_eq!(bar_addresses(&rig, NVME_PF), [Some(0x8101_0000)]);
    assert_eq!(bar_addresses(&rig, NVME_VF1), [Some(0x8101_4000)]);
    assert_eq!(bar_addresses(&rig, NVME_VF2), [Some(0x8101_8000)]);
    assert_eq!(bar_addresses(&rig, NVME_VF3), [Some(0x8101_c000)]);
    assert_eq!(bar_addresses(&rig, MULTI_F0), [Some(0x8102_4000)]);
    assert_eq!(bar_addresses(&rig, MULTI_F1), [Some(0x8102_5000)]);
    assert_eq!(bar_addresses(&rig, ARI_F0), [Some(0x8102_6000)]);
    assert_eq!(bar_addresses(&rig, ARI_F85), [Some(0x8102_8000)]);

    // The devices hold them, with decode and bus mastering on (§7.5.1.1.3).
    let gpu = rig.fabric.function(GPU, 0);
    assert_eq!(gpu.read(0x10), 0x8000_0000);
    assert_eq!(gpu.read(0x14), 0x0000_000c, "64-bit prefetchable type bits");
    assert_eq!(gpu.read(0x18), 0x40);
    assert_eq!(gpu.read(0x1c), 0x8100_0004);
    assert_eq!(gpu.read_u16(0x04) & 0b110, 0b110);
}

#[test]
fn sriov_vfs_get_ids_from_offset_and_stride_and_are_enabled() {
    let rig = started();
    let pf = rig.manager.inventory().function(NVME_PF).expect("PF");
    let setup = pf.sriov.expect("SR-IOV set up");
    assert_eq!(
        (setup.num_vfs, setup.first_vf_offset, setup.vf_stride),
        (3, 0x80, 0x40)
    );
    let device = rig.fabric.devices[usize::from(NVME)]
        .as_ref()
        .expect("NVMe");
    let (cap, _) = device.functions[0].sriov.as_ref().expect("SR-IOV");
    let space = &device.functions[0].space;
    assert!(vf_enabled(space, *cap));
    assert_eq!(cap.num_vfs(space), 3);
    // The VF BAR holds VF1's address; VF n is at + (n - 1) × 16 KiB.
    assert_eq!(space.read(cap.vf_bar0()), 0x8101_4004);
    for (id, vf) in [(NVME_VF1, 1), (NVME_VF2, 2), (NVME_VF3, 3)] {
        let f = rig.manager.inventory().function(id).expect("VF");
        assert_eq!(f.kind, FunctionKind::Virtual { pf: NVME_PF, vf });
        assert_eq!((f.vendor_id, f.device_id), (NVME_VENDOR, NVME_VF_DEVICE));
    }
}

#[test]
fn a_function_answering_retry_status_is_waited_for() {
    let rig = started();
    // Found, and not before it was ready.
    assert!(rig.manager.inventory().function(MULTI_F1).is_some());
    assert!(rig.clock.0.get() >= MULTI_READY_NS);

    // One that never gets ready is treated as broken after 1 s (§6.6.1):
    // its port is left empty and recorded as not responding, as a hung
    // device's is, and the rest of the fabric starts.
    let mut rig2 = self::rig();
    rig2.fabric.devices[usize::from(MULTI)]
        .as_mut()
        .expect("device")
        .ready_at_ns = u64::MAX;
    // Until started, hosts are told to retry (§2.3.1, §6.6.1), by the data
    // plane itself: their ports stay closed and not yet settled.
    let read = config_request(ROOT_PORT, 7, ConfigType::Type0, Bdf::new(1, 0, 0), 0, None);
    let out = rig2.plane.send(HOST0, read.header, &read.payload);
    assert_eq!(out.dropped, Some(DropReason::PortDisabled));
    let [answer] = &out.deliveries[..] else {
        panic!("one answer: {out:#?}");
    };
    let Body::Completion(completion) = answer.packet.header.body else {
        panic!("not a completion: {answer:#?}");
    };
    assert_eq!(answer.to, Destination::Port(ModelPort(HOST0)));
    assert_eq!(
        (
            completion.status,
            completion.requester,
            completion.tag.get()
        ),
        (CompletionStatus::RequestRetry, ROOT_PORT, 7)
    );
    let mut clock = rig2.clock.clone();
    rig2.manager
        .start(&mut rig2.fabric, &mut clock, &mut rig2.plane.switch, 0)
        .expect("a device that never gets ready does not stop the start");
    assert!(clock.0.get() >= 1_000_000_000, "waited for it 1 s");
    let inventory = rig2.manager.inventory();
    assert!(inventory.switches[0].not_responding(PortIndex(MULTI)));
    assert_eq!(
        inventory.port_on(SwitchIndex::LOCAL, PortIndex(MULTI)),
        PortKind::Empty
    );
    assert!(
        inventory
            .functions
            .iter()
            .all(|f| f.port != PortIndex(MULTI)),
        "nothing is left of the device"
    );
    assert!(
        inventory.function(NVME_PF).is_some(),
        "the other ports' devices are found"
    );
}

/// Host 0 enumerates its virtual switch as an OS does: root port secondary
/// bus 1 holds the upstream port, its secondary bus 2 the downstream ports
/// (devices 0 and 1), whose secondary buses are 3 and 4.
fn host0_enumerates(rig: &mut Rig) {
    let t0 = ConfigType::Type0;
    let t1 = ConfigType::Type1;
    let vusp = Bdf::new(1, 0, 0);
    assert_eq!(rig.read(HOST0, t0, vusp, 0x00), 0x0001_1d1d);
    assert_eq!(
        rig.read(HOST0, t0, vusp, 0x0c) >> 16 & 0x7f,
        1,
        "Type 1 header"
    );
    // Primary 1, secondary 2, subordinate 4.
    rig.write(HOST0, t0, vusp, 0x18, 0x0004_0201);
    for slot in 0..2u8 {
        let vdsp = Bdf::new(2, slot, 0);
        assert_eq!(rig.read(HOST0, t1, vdsp, 0x00), 0x0002_1d1d);
        let secondary = 3 + u32::from(slot);
        rig.write(HOST0, t1, vdsp, 0x18, secondary << 16 | secondary << 8 | 2);
    }
    assert_eq!(
        rig.read(HOST0, t1, Bdf::new(2, 2, 0), 0x00),
        u32::MAX,
        "no third port"
    );
    // Nothing bound yet: the slots read empty (UR → all ones).
    let (completion, value) = rig.config(HOST0, t1, Bdf::new(3, 0, 0), 0, None);
    assert_eq!(completion.status, CompletionStatus::UnsupportedRequest);
    assert_eq!(value, u32::MAX);
}

/// The host's hot-plug driver programs MSI and the slot events on slot 0.
fn host0_enables_hot_plug(rig: &mut Rig, slot: u8, data: u16) {
    let t1 = ConfigType::Type1;
    let vdsp = Bdf::new(2, slot, 0);
    let sw = rig.manager.virtual_switch(HostIndex(0)).expect("host 0");
    let caps = sw.downstream[usize::from(slot)].caps;
    let msi = caps.msi.offset;
    let pcie = caps.pcie.offset;
    rig.write(HOST0, t1, vdsp, msi + 4, 0xfee0_0000);
    rig.write(HOST0, t1, vdsp, msi + 8, 0);
    rig.write16(HOST0, t1, vdsp, msi + 0x0c, data);
    rig.write16(HOST0, t1, vdsp, msi + 2, 1);
    rig.write16(
        HOST0,
        t1,
        vdsp,
        pcie + 0x18,
        slot_control::HOT_PLUG_INTERRUPT_ENABLE
            | slot_control::PRESENCE_DETECT_CHANGED_ENABLE
            | slot_control::DLL_STATE_CHANGED_ENABLE,
    );
}

fn slot_status_of(rig: &mut Rig, slot: u8) -> u16 {
    let sw = rig.manager.virtual_switch(HostIndex(0)).expect("host 0");
    let pcie = sw.downstream[usize::from(slot)].caps.pcie.offset;
    (rig.read(HOST0, ConfigType::Type1, Bdf::new(2, slot, 0), pcie + 0x18) >> 16) as u16
}

#[test]
fn binding_sets_presence_and_sends_the_hot_plug_msi() {
    let mut rig = started();
    host0_enumerates(&mut rig);
    host0_enables_hot_plug(&mut rig, 0, 0x41);
    assert!(rig.host.msis.is_empty());
    rig.manager
        .bind(
            GPU_ID,
            HostIndex(0),
            0,
            &mut rig.plane.switch,
            &mut rig.host,
        )
        .expect("bind");
    assert_eq!(
        rig.host.msis,
        [(
            (0, PortIndex(HOST0)),
            Bdf::new(2, 0, 0),
            MsiMessage {
                address: 0xfee0_0000,
                data: 0x41
            }
        )]
    );
    let status = slot_status_of(&mut rig, 0);
    let expected = slot_status::PRESENCE_DETECT_STATE
        | slot_status::PRESENCE_DETECT_CHANGED
        | slot_status::DLL_STATE_CHANGED;
    assert_eq!(status & expected, expected);
    // ID map and owner are in place.
    assert_eq!(rig.plane.id_map(HOST0).len(), 1);
    assert_eq!(rig.plane.id_map(HOST0)[0].host, Bdf::new(3, 0, 0));
    assert!(matches!(
        rig.plane.role(GPU),
        PortRole::Endpoint { owner: Some(o), .. } if o.proxy_id == PROXY0
    ));
    // The same endpoint cannot be bound twice.
    assert_eq!(
        rig.manager.bind(
            GPU_ID,
            HostIndex(1),
            0,
            &mut rig.plane.switch,
            &mut rig.host
        ),
        Err(BindError::EndpointBusy {
            owner: Binding {
                host: HostIndex(0),
                slot: 0
            }
        })
    );
    assert_eq!(
        rig.manager.bind(
            NVME_PF,
            HostIndex(0),
            0,
            &mut rig.plane.switch,
            &mut rig.host
        ),
        Err(BindError::SlotOccupied {
            host: HostIndex(0),
            slot: 0,
            occupant: GPU_ID
        })
    );
}

/// Host 0 sizes and assigns the GPU's BARs behind slot 0 and enables it.
fn host0_assigns_gpu_bars(rig: &mut Rig) {
    let t1 = ConfigType::Type1;
    let gpu = Bdf::new(3, 0, 0);
    assert_eq!(rig.read(HOST0, t1, gpu, 0x00), 0x2330_10de);
    // Sizing (§7.5.1.2.1): all ones in, size mask and type bits out.
    let mut sizes = Vec::new();
    for bar in 0..6u16 {
        rig.write(HOST0, t1, gpu, 0x10 + 4 * bar, u32::MAX);
        sizes.push(rig.read(HOST0, t1, gpu, 0x10 + 4 * bar));
    }
    assert_eq!(
        sizes,
        [
            0xff00_0000, // 16 MiB, 32-bit
            0xf000_000c, // 256 MiB, 64-bit prefetchable
            0xffff_ffff,
            0xffff_0004, // 64 KiB, 64-bit
            0xffff_ffff,
            0
        ]
    );
    rig.write(HOST0, t1, gpu, 0x10, 0x9000_0000);
    rig.write(HOST0, t1, gpu, 0x14, 0x0000_0000);
    rig.write(HOST0, t1, gpu, 0x18, 0x2);
    rig.write(HOST0, t1, gpu, 0x1c, 0x9100_0000);
    rig.write(HOST0, t1, gpu, 0x20, 0);
    rig.write16(HOST0, t1, gpu, 0x04, 0b110);
    assert_eq!(rig.read(HOST0, t1, gpu, 0x10), 0x9000_0000);
    assert_eq!(rig.read(HOST0, t1, gpu, 0x04) & 0xffff, 0b110);
}

#[test]
fn a_host_write_to_its_bar_reaches_the_endpoint_at_its_fabric_address() {
    let mut rig = started();
    host0_enumerates(&mut rig);
    rig.manager
        .bind(
            GPU_ID,
            HostIndex(0),
            0,
            &mut rig.plane.switch,
            &mut rig.host,
        )
        .expect("bind");
    host0_assigns_gpu_bars(&mut rig);
    // The real BAR kept its fabric address: the host's value is shadow state.
    assert_eq!(rig.fabric.function(GPU, 0).read(0x10), 0x8000_0000);

    for (host_address, fabric_address) in [
        (0x9000_0010, 0x8000_0010u64),
        (0x2_0000_0100, 0x40_0000_0100),
        (0x9100_0ff0, 0x8100_0ff0),
    ] {
        let out = rig.plane.send(
            HOST0,
            memory(MemoryOp::Write, ROOT_PORT, 0, host_address, 1),
            &[1, 2, 3, 4],
        );
        assert_eq!(out.dropped, None, "{out:#?}");
        assert_eq!(out.deliveries.len(), 1);
        assert_eq!(out.deliveries[0].to, Destination::Port(ModelPort(GPU)));
        let m = as_memory(&out.deliveries[0].packet);
        assert_eq!(m.address, fabric_address);
        assert_eq!(m.requester, PROXY0);
    }
    // The GPU's DMA goes into host 0's aperture (1 << 63 | 0 << 52).
    let out = rig
        .plane
        .send(GPU, memory(MemoryOp::Write, GPU_ID, 0, 0x1000, 1), &[0; 4]);
    assert_eq!(out.deliveries.len(), 1, "{out:#?}");
    assert_eq!(out.deliveries[0].to, Destination::Port(ModelPort(HOST0)));
    let m = as_memory(&out.deliveries[0].packet);
    assert_eq!((m.address, m.requester), (0x1000, Bdf::new(3, 0, 0)));
}

#[test]
fn a_hosts_config_request_to_a_hung_bound_function_gets_completer_abort_after_the_switch_timeout() {
    let mut rig = started();
    host0_enumerates(&mut rig);
    for (function, slot) in [(GPU_ID, 0), (NVME_PF, 1)] {
        rig.manager
            .bind(
                function,
                HostIndex(0),
                slot,
                &mut rig.plane.switch,
                &mut rig.host,
            )
            .expect("bind");
    }
    host0_assigns_gpu_bars(&mut rig);
    rig.fabric.devices[usize::from(GPU)]
        .as_mut()
        .expect("the GPU")
        .hung = true;

    // The GPU's Vendor ID and a Command write are forwarded to it; each
    // waits the switch's completion timeout, not the manager's own 50 ms,
    // and is completed with Completer Abort by the virtual upstream port,
    // as the data plane completes a timed-out request (§2.8).
    let (t1, gpu, upstream) = (ConfigType::Type1, Bdf::new(3, 0, 0), Bdf::new(1, 0, 0));
    for write in [None, Some((0b110, 0b0011))] {
        let sent = rig.clock.0.get();
        let (completion, value) =
            rig.config(HOST0, t1, gpu, 0x04 * u16::from(write.is_some()), write);
        assert_eq!(completion.status, CompletionStatus::CompleterAbort);
        assert_eq!((completion.completer, completion.data_dw), (upstream, None));
        assert_eq!(value, u32::MAX);
        assert_eq!(rig.clock.0.get() - sent, FORWARDED_TIMEOUT_NS);
    }
    assert_eq!(rig.fabric.timed_out, [FORWARDED_TIMEOUT_NS; 2]);
    const { assert!(FORWARDED_TIMEOUT_NS < OWN_WAIT_NS) };
    // The manager's own requests wait their own time again.
    assert_eq!(rig.fabric.wait_ns, None);

    // What the manager holds for the GPU still reads; the other bound
    // function and the virtual ports are answered as before, at once.
    let before = rig.clock.0.get();
    assert_eq!(rig.read(HOST0, t1, gpu, 0x10), 0x9000_0000);
    assert_eq!(
        rig.read(HOST0, t1, Bdf::new(4, 0, 0), 0x00) & 0xffff,
        u32::from(NVME_VENDOR)
    );
    assert_eq!(rig.read(HOST0, t1, Bdf::new(2, 1, 0), 0x00), 0x0002_1d1d);
    assert_eq!(rig.clock.0.get(), before);
}

#[test]
fn host_1_cannot_reach_host_0s_endpoint() {
    let mut rig = started();
    host0_enumerates(&mut rig);
    rig.manager
        .bind(
            GPU_ID,
            HostIndex(0),
            0,
            &mut rig.plane.switch,
            &mut rig.host,
        )
        .expect("bind");
    host0_assigns_gpu_bars(&mut rig);
    let out = rig.plane.send(
        HOST1,
        memory(MemoryOp::Write, ROOT_PORT, 0, 0x9000_0010, 1),
        &[0; 4],
    );
    assert_eq!(out.dropped, Some(DropReason::NoWindow));
    assert!(out.deliveries.is_empty());
    let out = rig.plane.send(
        HOST1,
        memory(MemoryOp::Read, ROOT_PORT, 1, 0x9000_0010, 1),
        &[],
    );
    assert_eq!(out.dropped, Some(DropReason::NoWindow));
    assert!(matches!(
        out.deliveries[0].packet.header.body,
        Body::Completion(c) if c.status == CompletionStatus::UnsupportedRequest
    ));
    // Host 1 sees nothing behind its own (unbound) slots either.
    let vusp = Bdf::new(1, 0, 0);
    rig.write(HOST1, ConfigType::Type0, vusp, 0x18, 0x0004_0201);
    rig.write(
        HOST1,
        ConfigType::Type1,
        Bdf::new(2, 0, 0),
        0x18,
        0x0003_0302,
    );
    assert_eq!(
        rig.read(HOST1, ConfigType::Type1, Bdf::new(3, 0, 0), 0),
        u32::MAX
    );
}

#[test]
fn surprise_unbind_clears_presence_and_abandons_outstanding_requests() {
    let mut rig = started();
    host0_enumerates(&mut rig);
    host0_enables_hot_plug(&mut rig, 0, 0x41);
    rig.manager
        .bind(
            GPU_ID,
            HostIndex(0),
            0,
            &mut rig.plane.switch,
            &mut rig.host,
        )
        .expect("bind");
    host0_assigns_gpu_bars(&mut rig);
    // The driver acknowledges the insertion and the completion of its
    // Slot Control write (§6.7.3.2) (RW1C).
    let sw = rig.manager.virtual_switch(HostIndex(0)).expect("host 0");
    let pcie = sw.downstream[0].caps.pcie.offset;
    rig.write16(
        HOST0,
        ConfigType::Type1,
        Bdf::new(2, 0, 0),
        pcie + 0x1a,
        slot_status::PRESENCE_DETECT_CHANGED
            | slot_status::DLL_STATE_CHANGED
            | slot_status::COMMAND_COMPLETED,
    );
    assert_eq!(
        slot_status_of(&mut rig, 0),
        slot_status::PRESENCE_DETECT_STATE
    );
    // A read in flight to the GPU.
    let out = rig.plane.send(
        HOST0,
        memory(MemoryOp::Read, ROOT_PORT, 9, 0x9000_0000, 1),
        &[],
    );
    assert_eq!(out.deliveries[0].to, Destination::Port(ModelPort(GPU)));

    rig.manager
        .unbind(
            GPU_ID,
            UnbindMode::Surprise,
            &mut rig.plane.switch,
            &mut rig.host,
        )
        .expect("unbind");

    // The host's read is completed by the switch, to the host's own tag.
    let abandoned = rig.plane.switch.take_synthesized();
    assert_eq!(abandoned.len(), 1);
    match abandoned[0].packet.header.body {
        Body::Completion(c) => {
            assert_eq!(c.status, CompletionStatus::UnsupportedRequest);
            assert_eq!(c.tag.get(), 9);
            assert_eq!(c.requester, ROOT_PORT);
        }
        ref other => panic!("expected a completion, got {other:?}"),
    }
    // Absent, the change latched, and a second MSI.
    let status = slot_status_of(&mut rig, 0);
    assert_eq!(status & slot_status::PRESENCE_DETECT_STATE, 0);
    assert_ne!(status & slot_status::PRESENCE_DETECT_CHANGED, 0);
    assert_eq!(rig.host.msis.len(), 2);
    // Nothing reaches the GPU any more; its port is back in the free pool.
    let out = rig.plane.send(
        HOST0,
        memory(MemoryOp::Write, ROOT_PORT, 0, 0x9000_0010, 1),
        &[0; 4],
    );
    assert_eq!(out.dropped, Some(DropReason::NoWindow));
    assert!(rig.plane.windows(HOST0).is_empty());
    assert!(rig.plane.id_map(HOST0).is_empty());
    assert_eq!(
        rig.plane.role(GPU),
        PortRole::Endpoint {
            owner: None,
            buses: (3, 3)
        }
    );
    assert_eq!(
        rig.read(HOST0, ConfigType::Type1, Bdf::new(3, 0, 0), 0),
        u32::MAX
    );
    // And it can be bound again, elsewhere.
    rig.manager
        .bind(
            GPU_ID,
            HostIndex(1),
            1,
            &mut rig.plane.switch,
            &mut rig.host,
        )
        .expect("rebind");
}

#[test]
fn a_vf_binds_on_its_own_and_shows_its_pfs_identity() {
    let mut rig = started();
    rig.manager
        .bind(
            NVME_VF2,
            HostIndex(1),
            0,
            &mut rig.plane.switch,
            &mut rig.host,
        )
        .expect("bind VF");
    let (t0, t1) = (ConfigType::Type0, ConfigType::Type1);
    rig.write(HOST1, t0, Bdf::new(1, 0, 0), 0x18, 0x0004_0201);
    rig.write(HOST1, t1, Bdf::new(2, 0, 0), 0x18, 0x0003_0302);
    let vf = Bdf::new(3, 0, 0);
    assert_eq!(
        rig.read(HOST1, t1, vf, 0),
        u32::from(NVME_VF_DEVICE) << 16 | u32::from(NVME_VENDOR)
    );
    // Its BAR sizes like the PF's VF BAR0: 16 KiB, 64-bit.
    rig.write(HOST1, t1, vf, 0x10, u32::MAX);
    assert_eq!(rig.read(HOST1, t1, vf, 0x10), 0xffff_c004);
    rig.write(HOST1, t1, vf, 0x10, 0xa000_0000);
    rig.write(HOST1, t1, vf, 0x14, 0);
    rig.write16(HOST1, t1, vf, 0x04, 0b110);
    let out = rig.plane.send(
        HOST1,
        memory(MemoryOp::Write, ROOT_PORT, 0, 0xa000_0040, 1),
        &[0; 4],
    );
    assert_eq!(out.deliveries[0].to, Destination::Port(ModelPort(NVME)));
    assert_eq!(as_memory(&out.deliveries[0].packet).address, 0x8101_8040);
    // Its PF cannot go to another host: the PF's host could take the VF
    // away by resetting the PF or clearing VF Enable (§9.2.2.3, §9.3.3.3.1).
    assert_eq!(
        rig.manager.bind(
            NVME_PF,
            HostIndex(0),
            0,
            &mut rig.plane.switch,
            &mut rig.host
        ),
        Err(BindError::PortOwnedByOtherHost {
            switch: SwitchIndex::LOCAL,
            port: PortIndex(NVME),
            owner: HostIndex(1),
            function: NVME_PF,
            reason: SharingRefused::PhysicalFunctionWithVfs,
        })
    );
}

#[test]
fn peers_of_one_host_talk_in_the_fabric_unless_acs_redirects_them() {
    let mut rig = started();
    host0_enumerates(&mut rig);
    rig.manager
        .bind(
            GPU_ID,
            HostIndex(0),
            0,
            &mut rig.plane.switch,
            &mut rig.host,
        )
        .expect("bind GPU");
    rig.manager
        .bind(
            NVME_VF1,
            HostIndex(0),
            1,
            &mut rig.plane.switch,
            &mut rig.host,
        )
        .expect("bind VF");
    host0_assigns_gpu_bars(&mut rig);
    let t1 = ConfigType::Type1;
    let vf = Bdf::new(4, 0, 0);
    rig.write(HOST0, t1, vf, 0x10, 0x9200_0000);
    rig.write(HOST0, t1, vf, 0x14, 0);
    rig.write16(HOST0, t1, vf, 0x04, 0b110);
    assert_eq!(
        rig.plane.windows(HOST0).len(),
        4,
        "three GPU BARs and the VF's"
    );

    // The GPU writes to the VF's BAR as host 0 assigned it: straight
    // across the fabric, to the VF's fabric address.
    let p2p = memory(MemoryOp::Write, GPU_ID, 0, 0x9200_0010, 1);
    let out = rig.plane.send(GPU, p2p, &[0; 4]);
    assert_eq!(out.deliveries.len(), 1, "{out:#?}");
    assert_eq!(out.deliveries[0].to, Destination::Port(ModelPort(NVME)));
    assert_eq!(as_memory(&out.deliveries[0].packet).address, 0x8101_4010);

    // The host sets ACS P2P Request Redirect on the GPU's slot (§7.7.11.3):
    // the same write now goes up to the host, at its own address.
    let acs = rig
        .manager
        .virtual_switch(HostIndex(0))
        .expect("host 0")
        .downstream[0]
        .caps
        .acs
        .expect("ACS on downstream ports");
    rig.write16(
        HOST0,
        t1,
        Bdf::new(2, 0, 0),
        acs.offset + 6,
        weft_fabric::pcie::config::acs::feature::P2P_REQUEST_REDIRECT,
    );
    let out = rig.plane.send(GPU, p2p, &[0; 4]);
    assert_eq!(out.deliveries.len(), 1, "{out:#?}");
    assert_eq!(out.deliveries[0].to, Destination::Port(ModelPort(HOST0)));
    assert_eq!(as_memory(&out.deliveries[0].packet).address, 0x9200_0010);
}

#[test]
fn graceful_unbind_lets_requests_in_flight_complete() {
    let mut rig = started();
    host0_enumerates(&mut rig);
    rig.manager
        .bind(
            GPU_ID,
            HostIndex(0),
            0,
            &mut rig.plane.switch,
            &mut rig.host,
        )
        .expect("bind");
    host0_assigns_gpu_bars(&mut rig);
    let out = rig.plane.send(
        HOST0,
        memory(MemoryOp::Read, ROOT_PORT, 5, 0x9000_0000, 1),
        &[],
    );
    let fabric_tag = as_memory(&out.deliveries[0].packet).tag;
    let waiting = rig
        .manager
        .unbind(
            GPU_ID,
            UnbindMode::Graceful,
            &mut rig.plane.switch,
            &mut rig.host,
        )
        .expect("unbind");
    assert!(matches!(waiting, Unbinding::Waiting(_)), "{waiting:?}");
    // The host gives the GPU up: its driver powers the slot off.
    rig.power_off_slot(HOST0, Bdf::new(2, 0, 0));
    assert_eq!(rig.manager.binding_of(GPU_ID), None);
    assert!(rig.plane.switch.take_synthesized().is_empty());
    // The GPU still answers; the completion reaches the host with its tag.
    let completion = weft_fabric::pcie::tlp::Header {
        digest_present: false,
        poisoned: false,
        body: Body::Completion(weft_fabric::pcie::tlp::Completion {
            locked: false,
            traffic_class: Default::default(),
            attributes: Default::default(),
            completer: GPU_ID,
            status: CompletionStatus::Successful,
            byte_count_modified: false,
            byte_count: 4,
            requester: PROXY0,
            tag: fabric_tag,
            lower_address: 0,
            data_dw: Some(1),
        }),
    };
    let out = rig.plane.send(GPU, completion, &[1, 2, 3, 4]);
    assert_eq!(out.deliveries.len(), 1, "{out:#?}");
    assert_eq!(out.deliveries[0].to, Destination::Port(ModelPort(HOST0)));
    match out.deliveries[0].packet.header.body {
        Body::Completion(c) => assert_eq!((c.tag.get(), c.requester), (5, ROOT_PORT)),
        ref other => panic!("expected a completion, got {other:?}"),
    }
    assert_eq!(
        rig.read(HOST0, ConfigType::Type1, Bdf::new(3, 0, 0), 0),
        u32::MAX
    );
}

/// The manager lives in the soft core's 256 KiB of data RAM
/// (`weft_regs::DATA_RAM_SIZE`) beside the stack and the network buffers:
/// at its full capacities (4 hosts × 1 + 8 virtual ports, 128 functions,
/// 16 switches) it must stay well under half of it. Measured on the build
/// host, whose `usize` is at least as wide as the soft core's.
#[test]
fn the_manager_fits_the_soft_cores_data_ram() {
    let size = core::mem::size_of::<FabricManager>();
    println!("FabricManager: {size} bytes");
    assert!(size < 48 * 1024, "{size} bytes");
    assert!(size < weft_regs::DATA_RAM_SIZE as usize / 2);
}

// ---------------------------------------------------------------- one drive, two hosts

/// Host 1 numbers its virtual switch as host 0 does in `host0_enumerates`:
/// upstream bus 1, slots on bus 2, their secondary buses 3 and 4.
fn host1_enumerates(rig: &mut Rig) {
    let (t0, t1) = (ConfigType::Type0, ConfigType::Type1);
    rig.write(HOST1, t0, Bdf::new(1, 0, 0), 0x18, 0x0004_0201);
    rig.write(HOST1, t1, Bdf::new(2, 0, 0), 0x18, 0x0003_0302);
    rig.write(HOST1, t1, Bdf::new(2, 1, 0), 0x18, 0x0004_0402);
}

/// The host at `port` sizes its VF at `vf` (host ID), assigns its BAR0 at
/// `address` and enables Memory Space and Bus Master.
fn host_assigns_vf_bar(rig: &mut Rig, port: u8, vf: Bdf, address: u32) {
    let t1 = ConfigType::Type1;
    assert_eq!(
        rig.read(port, t1, vf, 0),
        u32::from(NVME_VF_DEVICE) << 16 | u32::from(NVME_VENDOR),
        "the host finds its VF"
    );
    rig.write(port, t1, vf, 0x10, u32::MAX);
    assert_eq!(rig.read(port, t1, vf, 0x10), 0xffff_c004, "16 KiB, 64-bit");
    rig.write(port, t1, vf, 0x10, address);
    rig.write(port, t1, vf, 0x14, 0);
    rig.write16(port, t1, vf, 0x04, 0b110);
}

/// VF 1 bound to host 0's slot 1 (host ID 4:0.0), VF 2 to host 1's slot 0
/// (host ID 3:0.0), the GPU to host 0's slot 0; each host put its VF's BAR0
/// at 0xa000_0000, and host 0 the GPU's BARs as `host0_assigns_gpu_bars`.
fn two_hosts_share_the_drive() -> Rig {
    let mut rig = started();
    host0_enumerates(&mut rig);
    host1_enumerates(&mut rig);
    for (function, host, slot) in [(GPU_ID, 0, 0), (NVME_VF1, 0, 1), (NVME_VF2, 1, 0)] {
        rig.manager
            .bind(
                function,
                HostIndex(host),
                slot,
                &mut rig.plane.switch,
                &mut rig.host,
            )
            .expect("bind");
    }
    host0_assigns_gpu_bars(&mut rig);
    host_assigns_vf_bar(&mut rig, HOST0, Bdf::new(4, 0, 0), 0xa000_0000);
    host_assigns_vf_bar(&mut rig, HOST1, Bdf::new(3, 0, 0), 0xa000_0000);
    rig
}

/// VF n's BAR0 in the fabric: the VF BAR region (after the PF's BAR0 at
/// 0x8101_0000) holds the VFs' 16 KiB BARs in VF order (§9.3.3.14).
const VF1_BAR: u64 = 0x8101_4000;
const VF2_BAR: u64 = 0x8101_8000;

#[test]
fn vfs_of_one_drive_bound_to_two_hosts_each_reach_their_own_host() {
    let mut rig = two_hosts_share_the_drive();
    // The port has no owner of its own; each VF has its own.
    assert_eq!(
        rig.plane.role(NVME),
        PortRole::Endpoint {
            owner: None,
            buses: (4, 5)
        }
    );
    let owners: Vec<(Bdf, u16, u8)> = rig
        .plane
        .switch
        .port_tables(ModelPort(NVME))
        .expect("the port exists")
        .function_owners
        .iter()
        .map(|e| (e.function, e.owner.host.0, e.intx_swizzle))
        .collect();
    assert_eq!(owners, [(NVME_VF1, 0, 1), (NVME_VF2, 1, 0)]);

    // Each host's write to the same address of its own VF reaches that VF.
    for (port, proxy, fabric_bar) in [
        (HOST0, PROXY0, VF1_BAR),
        (HOST1, Bdf::new(2, 0, 0), VF2_BAR),
    ] {
        let out = rig.plane.send(
            port,
            memory(MemoryOp::Write, ROOT_PORT, 0, 0xa000_0040, 1),
            &[0; 4],
        );
        assert_eq!(out.deliveries.len(), 1, "{out:#?}");
        assert_eq!(out.deliveries[0].to, Destination::Port(ModelPort(NVME)));
        let m = as_memory(&out.deliveries[0].packet);
        assert_eq!((m.address, m.requester), (fabric_bar + 0x40, proxy));
    }
    // Each VF's DMA goes to its own host, under the ID that host gave it.
    for (vf, port, host_id) in [
        (NVME_VF1, HOST0, Bdf::new(4, 0, 0)),
        (NVME_VF2, HOST1, Bdf::new(3, 0, 0)),
    ] {
        let out = rig
            .plane
            .send(NVME, memory(MemoryOp::Write, vf, 0, 0x2000, 1), &[0; 4]);
        assert_eq!(out.deliveries.len(), 1, "{out:#?}");
        assert_eq!(out.deliveries[0].to, Destination::Port(ModelPort(port)));
        let m = as_memory(&out.deliveries[0].packet);
        assert_eq!((m.address, m.requester), (0x2000, host_id));
    }
    // Errors go to each VF's own host (and the event log).
    let out = rig.plane.send(
        NVME,
        weft_fabric::pcie::tlp::Header {
            digest_present: false,
            poisoned: false,
            body: Body::Message(weft_fabric::pcie::tlp::Message::new(
                NVME_VF2,
                weft_fabric::pcie::tlp::MessageCode::ErrFatal,
                weft_fabric::pcie::tlp::MessageRouting::ToRootComplex,
            )),
        },
        &[],
    );
    let to: Vec<Destination> = out.deliveries.iter().map(|d| d.to).collect();
    assert_eq!(to, [Destination::Port(ModelPort(HOST1)), Destination::Cpu]);
}

#[test]
fn vfs_of_a_shared_drive_are_isolated_from_each_others_host() {
    let mut rig = two_hosts_share_the_drive();
    // VF 1 reaches host 0's GPU at the address host 0 gave it.
    let out = rig.plane.send(
        NVME,
        memory(MemoryOp::Write, NVME_VF1, 0, 0x9000_0010, 1),
        &[0; 4],
    );
    assert_eq!(out.deliveries[0].to, Destination::Port(ModelPort(GPU)));
    assert_eq!(as_memory(&out.deliveries[0].packet).address, 0x8000_0010);
    // VF 2 does not: host 0's windows do not exist for it, so the same
    // address is host 1's own memory.
    let out = rig.plane.send(
        NVME,
        memory(MemoryOp::Write, NVME_VF2, 0, 0x9000_0010, 1),
        &[0; 4],
    );
    assert_eq!(out.deliveries.len(), 1, "{out:#?}");
    assert_eq!(out.deliveries[0].to, Destination::Port(ModelPort(HOST1)));
    assert_eq!(as_memory(&out.deliveries[0].packet).address, 0x9000_0010);
    // The PF and VF 3 are bound to no host and reach nothing.
    for function in [NVME_PF, NVME_VF3] {
        let out = rig.plane.send(
            NVME,
            memory(MemoryOp::Write, function, 0, 0x2000, 1),
            &[0; 4],
        );
        assert_eq!(out.dropped, Some(DropReason::Unbound), "{function:?}");
        assert!(out.deliveries.is_empty());
    }
    // Host 1 reaches neither the GPU nor VF 1.
    for address in [0x9000_0010u64, VF1_BAR + 0x40] {
        let out = rig.plane.send(
            HOST1,
            memory(MemoryOp::Write, ROOT_PORT, 0, address, 1),
            &[0; 4],
        );
        assert_eq!(out.dropped, Some(DropReason::NoWindow));
    }
}

#[test]
fn surprise_unbind_of_one_vf_leaves_the_other_hosts_vf_alone() {
    let mut rig = two_hosts_share_the_drive();
    // Both hosts read their VF; neither read is answered yet.
    for port in [HOST0, HOST1] {
        let out = rig.plane.send(
            port,
            memory(MemoryOp::Read, ROOT_PORT, 9, 0xa000_0000, 1),
            &[],
        );
        assert_eq!(out.deliveries[0].to, Destination::Port(ModelPort(NVME)));
    }
    rig.manager
        .unbind(
            NVME_VF1,
            UnbindMode::Surprise,
            &mut rig.plane.switch,
            &mut rig.host,
        )
        .expect("unbind");
    // Host 0's read is completed with UR; host 1's is still in flight.
    let abandoned = rig.plane.switch.take_synthesized();
    assert_eq!(abandoned.len(), 1, "{abandoned:#?}");
    assert_eq!(abandoned[0].to, Destination::Port(ModelPort(HOST0)));
    assert_eq!(rig.plane.switch.outstanding(ModelPort(HOST0)), 0);
    assert_eq!(rig.plane.switch.outstanding(ModelPort(HOST1)), 1);
    // VF 1 reaches nothing now; VF 2 still reaches host 1.
    let out = rig.plane.send(
        NVME,
        memory(MemoryOp::Write, NVME_VF1, 0, 0x2000, 1),
        &[0; 4],
    );
    assert_eq!(out.dropped, Some(DropReason::Unbound));
    let out = rig.plane.send(
        NVME,
        memory(MemoryOp::Write, NVME_VF2, 0, 0x2000, 1),
        &[0; 4],
    );
    assert_eq!(out.deliveries[0].to, Destination::Port(ModelPort(HOST1)));
    // And VF 1 can go to host 1 too.
    rig.manager
        .bind(
            NVME_VF1,
            HostIndex(1),
            1,
            &mut rig.plane.switch,
            &mut rig.host,
        )
        .expect("rebind to host 1");
    let out = rig.plane.send(
        NVME,
        memory(MemoryOp::Write, NVME_VF1, 0, 0x2000, 1),
        &[0; 4],
    );
    assert_eq!(out.deliveries[0].to, Destination::Port(ModelPort(HOST1)));
}

#[test]
fn functions_that_may_talk_inside_their_device_are_not_shared() {
    // The ARI device's second function has an ACS capability: it may send
    // peer-to-peer requests to function 0 without the switch seeing them
    // (§6.12.1.2).
    let mut rig = rig();
    let ai = identity(0x15b3, 0x101e, 0x02_07_00);
    let mut f85 = plain_function(
        0x85,
        ai,
        [Some(Bar::memory32(8 << 10)), None, None, None, None, None],
        false,
    );
    let mut list = weft_fabric::pcie::config::CapabilityList::new(&mut f85.space).expect("fresh");
    list.push_extended(&weft_fabric::pcie::config::ari::Ari {
        next_function: 0,
        function_groups: 0,
    })
    .expect("fits");
    list.push_extended(&weft_fabric::pcie::config::acs::Acs {
        features: weft_fabric::pcie::config::acs::feature::P2P_REQUEST_REDIRECT,
        egress_vector_bits: 0,
    })
    .expect("fits");
    let device = rig.fabric.devices[usize::from(ARI)]
        .as_mut()
        .expect("the ARI device");
    device.functions[1] = f85;
    let mut clock = rig.clock.clone();
    rig.manager
        .start(&mut rig.fabric, &mut clock, &mut rig.plane.switch, 0)
        .expect("the fabric enumerates");
    rig.manager
        .bind(
            ARI_F0,
            HostIndex(0),
            0,
            &mut rig.plane.switch,
            &mut rig.host,
        )
        .expect("bind function 0");
    assert_eq!(
        rig.manager.bind(
            ARI_F85,
            HostIndex(1),
            0,
            &mut rig.plane.switch,
            &mut rig.host
        ),
        Err(BindError::PortOwnedByOtherHost {
            switch: SwitchIndex::LOCAL,
            port: PortIndex(ARI),
            owner: HostIndex(0),
            function: ARI_F85,
            reason: SharingRefused::PeerToPeerInsideDevice,
        })
    );
    // Refused with nothing written: function 0 alone, on a port it does not fill.
    let tables = rig
        .plane
        .switch
        .port_tables(ModelPort(ARI))
        .expect("the port exists");
    assert_eq!(tables.function_owners.len(), 1);
    assert_eq!(tables.function_owners[0].function, ARI_F0);
    // The same host may take it.
    rig.manager
        .bind(
            ARI_F85,
            HostIndex(0),
            1,
            &mut rig.plane.switch,
            &mut rig.host,
        )
        .expect("bind to the same host");
    assert!(matches!(
        rig.plane.role(ARI),
        PortRole::Endpoint { owner: Some(o), .. } if o.host == HostIndex(0)
    ));
    assert!(rig
        .plane
        .switch
        .port_tables(ModelPort(ARI))
        .expect("the port exists")
        .function_owners
        .is_empty());
}

/// A PF bound to a host shows no SR-IOV capability: its VFs are the
/// fabric's. The capability's header reads as a Null Extended Capability
/// with its Next Capability Offset kept (§7.6.3), so a walk of the list
/// passes over it and still reaches what follows, and its registers (VF
/// BARs among them) read 0.
#[test]
fn a_bound_pf_hides_its_sriov_capability_from_its_host() {
    let mut rig = started();
    rig.manager
        .bind(
            NVME_PF,
            HostIndex(0),
            0,
            &mut rig.plane.switch,
            &mut rig.host,
        )
        .expect("bind the PF");
    let (t0, t1) = (ConfigType::Type0, ConfigType::Type1);
    rig.write(HOST0, t0, Bdf::new(1, 0, 0), 0x18, 0x0004_0201);
    rig.write(HOST0, t1, Bdf::new(2, 0, 0), 0x18, 0x0003_0302);
    let pf = Bdf::new(3, 0, 0);
    // The host's walk: headers from 0x100 until Next is 0 (§7.6.3).
    let mut seen = Vec::new();
    let mut offset = 0x100u16;
    while offset != 0 && seen.len() < 64 {
        let header = rig.read(HOST0, t1, pf, offset);
        seen.push((offset, header & 0xffff, header >> 20));
        offset = (header >> 20) as u16;
    }
    assert!(
        !seen
            .iter()
            .any(|&(_, id, _)| id == u32::from(ext_cap_id::SRIOV)),
        "{seen:x?}"
    );
    // The fabric sees the capability where the host sees a Null one.
    let (null_at, _, next) = *seen
        .iter()
        .find(|&&(_, id, _)| id == 0)
        .expect("the SR-IOV capability became a Null capability");
    let real = rig
        .fabric
        .read(PortIndex(NVME), NVME_PF, null_at)
        .expect("the PF answers the fabric");
    assert_eq!(real & 0xffff, u32::from(ext_cap_id::SRIOV));
    assert_eq!(real >> 20, next);
    // VF BAR0 (SR-IOV capability + 0x24, §9.3.3.14) reads 0 to the host.
    assert_eq!(rig.read(HOST0, t1, pf, null_at + 0x24), 0);
}
