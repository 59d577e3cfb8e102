//! Management requests answered from the fabric manager: given a started
//! fabric of one switch with two hosts, a GPU and an NVMe drive with SR-IOV,
//! each request gets the answer that the PCIe facts below imply.

mod common;

use common::*;
use sha2::{Digest as _, Sha256};
use weft_fabric::board::{Board, BoardFault};
use weft_fabric::boot_image::Handoff;
use weft_fabric::events::{ErrorSeverity, IsolationCheck, EVENT_LOG_CAPACITY};
use weft_fabric::firmware_update::{boot, FirmwareService, FirmwareUpdate};
use weft_fabric::inventory::SwitchIndex;
use weft_fabric::management::{handle, BoardInfo, Hardware, PortLink, PortLinks};
use weft_fabric::manager::FabricManager;
use weft_fabric::memory_flash::MemoryFlash;
use weft_fabric::pcie::config::header::{command, common as header, type0};
use weft_fabric::pcie::config::pcie_cap::{
    device_capabilities, device_control, PcieCapability, PortType, DEVICE_CONTROL,
};
use weft_fabric::pcie::config::pm::{PowerManagement, PMCSR};
use weft_fabric::pcie::config::walk::find_capability;
use weft_fabric::pcie::config::{cap_id, sriov, Bar, CapabilityList};
use weft_fabric::pcie::Bdf;
use weft_fabric::persist::{ArrayFlash, Flash};
use weft_fabric::settings::{FabricSettings, HostPort};
use weft_model::csr_window::CsrWindow;
use weft_model::Switch;
use weft_proto::heapless::Vec as Bounded;
use weft_proto::{
    encode_response, AccessWidth, AerSeverity, BarKind, BootReason, Capabilities, CompletionStatus,
    CounterKind, Digest, EndpointInfo, Error, EventKind, EventPage, EventSeq, FabricId, FlashOp,
    Generation, Header, HostIndex, ImageSlot, IsolationCheck as WireCheck, Key, LinkSpeed,
    LinkState, LinkStatus, OperationId, OperationState, Owner, PortAction,
    PortCounters as WireCounters, PortIndex as WirePort, PortRef, PortRole, Request, ResetScope,
    Response, SlotIndex, SlotState, SwitchId, Token, TopologyCursor, TopologyItem, TopologyPage,
    UnbindMode, UpdateState, VirtualSwitchInfo, EVENTS_PAGE_LEN, MAX_DATAGRAM,
    OLDEST_PROTOCOL_VERSION, PROTOCOL_VERSION, TOPOLOGY_PAGE_ITEMS,
};
use weft_regs::csr::{counter_control, global, port as port_csr, window as window_csr};
use weft_regs::driver::CsrBus;
use weft_regs::soc::spi_flash::SECTOR_SIZE;
use weft_regs::tables::{HostIndex as FabricHost, PortIndex};

const PORTS: usize = 8;
const SWITCH_ID: u64 = 0x5745_4654_0000_0000;
const HOST0: u8 = 0;
const HOST1: u8 = 1;
const GPU: u8 = 2;
const NVME: u8 = 3;

/// Bus 0 the manager, 1 and 2 the hosts' proxies, then one bus per
/// endpoint port in port order.
const GPU_ID: FabricId = FabricId(0x0300);
const NVME_PF: FabricId = FabricId(0x0400);
/// PCIe Base 6.0 §9.3.3.9-10: VF n = PF RID + First VF Offset (0x80) +
/// (n - 1) × VF Stride (0x40).
const NVME_VF1: FabricId = FabricId(0x0480);
const NVME_VF2: FabricId = FabricId(0x04c0);

const BOARD: BoardInfo = BoardInfo {
    board: "test-board",
    version: (0, 3, 1),
    build: "abc1234",
    ports: PORTS as u8,
    authenticated: true,
};

/// Every port's link: Gen3 x16 up where something is cabled, down elsewhere.
struct Links;

impl PortLinks for Links {
    fn link(&mut self, _switch_id: u64, port: u8) -> PortLink {
        let status = if [HOST0, HOST1, GPU, NVME].contains(&port) {
            LinkStatus {
                state: LinkState::Up,
                speed: Some(LinkSpeed::Gen3),
                width: 16,
            }
        } else {
            LinkStatus {
                state: LinkState::Down,
                speed: None,
                width: 0,
            }
        };
        PortLink {
            status,
            max_speed: LinkSpeed::Gen4,
            max_width: 16,
        }
    }
}

fn settings() -> FabricSettings {
    let mut s = FabricSettings {
        switch_id: SWITCH_ID,
        num_vfs: 2,
        ..FabricSettings::default()
    };
    s.upstream_identity = identity(0x1d1d, 0x0001, 0x06_04_00);
    s.downstream_identity = identity(0x1d1d, 0x0002, 0x06_04_00);
    for (port, host) in [(HOST0, 0), (HOST1, 1)] {
        s.hosts
            .push(HostPort {
                switch: s.switch_id,
                port: PortIndex(port),
                host: FabricHost(host),
                slots: 2,
            })
            .expect("room for two hosts");
    }
    s
}

fn rig() -> Rig {
    let clock = Clock::default();
    let mut fabric = FakeFabric::new(PORTS, clock.clone());
    // GPU: BAR0 32-bit 16 MiB, BAR1-2 64-bit prefetchable 256 MiB; Power
    // Management and a PCI Express capability that offers Function Level
    // Reset.
    let mut gpu = plain_function(
        0,
        identity(0x10de, 0x2330, 0x03_02_00),
        [
            Some(Bar::memory32(16 << 20)),
            Some(Bar::memory64(256 << 20, true)),
            None,
            None,
            None,
            None,
        ],
        false,
    );
    let mut list = CapabilityList::new(&mut gpu.space).expect("fresh");
    list.push(&PowerManagement::minimal()).expect("fits");
    let mut express = PcieCapability::new(PortType::Endpoint);
    express.device_capabilities |= device_capabilities::FLR_CAPABLE;
    list.push(&express).expect("fits");
    fabric.devices[usize::from(GPU)] = Some(FakeDevice::new(vec![gpu]));
    // NVMe PF: BAR0-1 64-bit 16 KiB, four VFs of which two are enabled.
    fabric.devices[usize::from(NVME)] = Some(FakeDevice::new(vec![sriov_pf(
        identity(0x144d, 0xa824, 0x01_08_02),
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

/// A board for the requests that reach it: a CSR window (weft-model's,
/// over a switch of its own) recording every write that reaches it,
/// configuration flash in memory, and resets recorded rather than done.
/// Each is optional: a board without them answers `Unsupported`.
#[derive(Default)]
struct TestBoard {
    window: Option<CsrWindow>,
    csr_writes: Vec<(u32, u32)>,
    flash: Option<ArrayFlash<8192>>,
    resettable: bool,
    resets: Vec<ResetScope>,
}

impl TestBoard {
    fn full() -> Self {
        TestBoard {
            window: Some(CsrWindow::new(Switch::new(PORTS))),
            flash: Some(ArrayFlash::erased()),
            resettable: true,
            ..TestBoard::default()
        }
    }
}

impl Board for TestBoard {
    fn read_csr(&mut self, address: u32) -> Result<u32, BoardFault> {
        let window = self.window.as_mut().ok_or(BoardFault::Unsupported)?;
        Ok(window.read32(address))
    }

    fn write_csr(&mut self, address: u32, value: u32) -> Result<(), BoardFault> {
        let window = self.window.as_mut().ok_or(BoardFault::Unsupported)?;
        self.csr_writes.push((address, value));
        window.write32(address, value);
        Ok(())
    }

    fn config_flash(&mut self) -> Option<&mut dyn Flash> {
        self.flash.as_mut().map(|f| f as &mut dyn Flash)
    }

    fn resets(&self, _scope: ResetScope) -> bool {
        self.resettable
    }

    fn schedule_reset(&mut self, scope: ResetScope) {
        self.resets.push(scope);
    }
}

/// Answers `request` on a board that has no CSR window, flash or reset.
fn ask(rig: &mut Rig, request: Request) -> Response {
    ask_on(rig, &mut TestBoard::default(), request)
}

/// Answers `request` on `board`, at the rig's time, as the firmware does.
fn ask_on(rig: &mut Rig, board: &mut TestBoard, request: Request) -> Response {
    rig.manager.set_time(rig.clock.0.get());
    let mut clock = rig.clock.clone();
    let hardware = Hardware {
        config: &mut rig.fabric,
        fabric: &mut rig.plane.switch,
        hosts: &mut rig.host,
        links: &mut Links,
        firmware: None,
        timer: Some(&mut clock),
        board,
    };
    handle(&mut rig.manager, &BOARD, &request, &[], hardware)
}

fn refusal_on(rig: &mut Rig, board: &mut TestBoard, request: Request) -> Error {
    match ask_on(rig, board, request) {
        Response::Error(error) => error,
        other => panic!("expected a refusal, got {other:?}"),
    }
}

fn refusal(rig: &mut Rig, request: Request) -> Error {
    match ask(rig, request) {
        Response::Error(error) => error,
        other => panic!("expected a refusal, got {other:?}"),
    }
}

fn functions(ids: &[FabricId]) -> Bounded<FabricId, 8> {
    ids.iter().copied().collect()
}

fn bind(host: u8, slot: u8, ids: &[FabricId]) -> Request {
    Request::Bind {
        host: HostIndex(host),
        slot: SlotIndex(slot),
        functions: functions(ids),
        if_generation: None,
    }
}

fn unbind(host: u8, slot: u8, mode: UnbindMode) -> Request {
    Request::Unbind {
        host: HostIndex(host),
        slot: SlotIndex(slot),
        mode,
        if_generation: None,
    }
}

fn page(rig: &mut Rig, cursor: u32, generation: Option<Generation>) -> TopologyPage {
    match ask(
        rig,
        Request::Topology {
            cursor: TopologyCursor(cursor),
            generation,
        },
    ) {
        Response::Topology(page) => page,
        other => panic!("expected a topology page, got {other:?}"),
    }
}

/// Every item, page by page; bounded by the number of items a fabric of
/// this size can have.
fn all_items(rig: &mut Rig) -> (Generation, Vec<TopologyItem>) {
    let first = page(rig, 0, None);
    let generation = first.generation;
    let mut items: Vec<TopologyItem> = first.items.into_iter().collect();
    let mut next = first.next;
    for _ in 0..64 {
        let Some(cursor) = next else {
            return (generation, items);
        };
        assert_eq!(cursor.0 as usize, items.len(), "the cursor counts items");
        let page = page(rig, cursor.0, Some(generation));
        assert_eq!(page.generation, generation);
        items.extend(page.items);
        next = page.next;
    }
    panic!("the topology never ended");
}

fn endpoint(items: &[TopologyItem], id: FabricId) -> EndpointInfo {
    items
        .iter()
        .find_map(|item| match item {
            TopologyItem::Endpoint(e) if e.fabric_id == id => Some(e.clone()),
            _ => None,
        })
        .expect("the function is listed")
}

fn vswitch(rig: &mut Rig, host: u8) -> VirtualSwitchInfo {
    match ask(
        rig,
        Request::VirtualSwitch {
            host: HostIndex(host),
        },
    ) {
        Response::VirtualSwitch(info) => info,
        other => panic!("expected a virtual switch, got {other:?}"),
    }
}

#[test]
fn ping_is_answered_with_pong() {
    let mut rig = started();
    assert_eq!(ask(&mut rig, Request::Ping), Response::Pong);
}

#[test]
fn identify_reports_the_switch_board_versions_and_capabilities() {
    let mut rig = started();
    let Response::Identity(identity) = ask(&mut rig, Request::Identify) else {
        panic!("expected an identity");
    };
    assert_eq!(identity.switch, SwitchId(SWITCH_ID));
    assert_eq!(identity.board.as_str(), "test-board");
    assert_eq!(
        (
            identity.firmware.major,
            identity.firmware.minor,
            identity.firmware.patch
        ),
        (0, 3, 1)
    );
    assert_eq!(identity.firmware.build.as_str(), "abc1234");
    assert_eq!(identity.protocol, PROTOCOL_VERSION);
    assert_eq!(identity.oldest_protocol, OLDEST_PROTOCOL_VERSION);
    assert_eq!(identity.ports, PORTS as u8);
    let caps = identity.capabilities;
    assert!(caps.contains(Capabilities::BIND.union(Capabilities::SRIOV)));
    assert!(caps.contains(Capabilities::AUTHENTICATED));
    // One switch: no fabric of several.
    assert!(!caps.contains(Capabilities::MULTI_SWITCH));
    assert!(caps.contains(Capabilities::DIAGNOSTICS));
    // A board without configuration flash saves nothing; one with it does.
    assert!(!caps.contains(Capabilities::PERSISTENT_CONFIG));
    let Response::Identity(identity) = ask_on(&mut rig, &mut TestBoard::full(), Request::Identify)
    else {
        panic!("expected an identity");
    };
    assert!(identity
        .capabilities
        .contains(Capabilities::PERSISTENT_CONFIG));
    // No firmware update without a service for its requests.
    assert!(!caps.contains(Capabilities::FIRMWARE_UPDATE));
}

#[test]
fn topology_lists_switch_ports_and_functions_in_pages() {
    let mut rig = started();
    let (_, items) = all_items(&mut rig);
    // 1 switch, no fabric links, 8 ports, GPU + NVMe PF + 2 VFs.
    let switches = items
        .iter()
        .filter(|i| matches!(i, TopologyItem::Switch(_)))
        .count();
    let links = items
        .iter()
        .filter(|i| matches!(i, TopologyItem::Link(_)))
        .count();
    let ports: Vec<_> = items
        .iter()
        .filter_map(|i| match i {
            TopologyItem::Port(p) => Some(*p),
            _ => None,
        })
        .collect();
    assert_eq!((switches, links, ports.len()), (1, 0, PORTS));
    assert_eq!(items.len(), 1 + PORTS + 4);
    assert!(items.len() > TOPOLOGY_PAGE_ITEMS, "more than one page");
    let roles: Vec<PortRole> = ports.iter().map(|p| p.role).collect();
    assert_eq!(
        roles[..5],
        [
            PortRole::Host { host: HostIndex(0) },
            PortRole::Host { host: HostIndex(1) },
            PortRole::Endpoint,
            PortRole::Endpoint,
            PortRole::Unused,
        ]
    );
    assert_eq!(ports[2].link.state, LinkState::Up);
    assert_eq!(ports[5].link.state, LinkState::Down);
    assert_eq!(ports[0].max_speed, LinkSpeed::Gen4);

    let gpu = endpoint(&items, GPU_ID);
    assert_eq!(gpu.at.port, WirePort(GPU));
    assert_eq!((gpu.vendor_id, gpu.device_id), (0x10de, 0x2330));
    assert_eq!(gpu.class_code.0, 0x03_02_00);
    let bars: Vec<_> = gpu
        .bars
        .iter()
        .map(|b| (b.index, b.kind, b.prefetchable, b.size))
        .collect();
    assert_eq!(
        bars,
        [
            (0, BarKind::Memory32, false, 16 << 20),
            (1, BarKind::Memory64, true, 256 << 20),
        ]
    );
    // BARs are placed naturally aligned (§7.5.1.2.1).
    for bar in &gpu.bars {
        assert_eq!(bar.fabric_address % bar.size, 0);
        assert_ne!(bar.fabric_address, 0);
    }
    assert_eq!((gpu.sriov, gpu.owner), (None, None));

    let pf = endpoint(&items, NVME_PF);
    let sriov = pf.sriov.expect("the PF has SR-IOV");
    assert_eq!(
        (
            sriov.total_vfs,
            sriov.num_vfs,
            sriov.first_vf_offset,
            sriov.vf_stride,
            sriov.vf_device_id
        ),
        (4, 2, 0x80, 0x40, NVME_VF_DEVICE)
    );
    let vf = endpoint(&items, NVME_VF2);
    assert_eq!(vf.physical_function, Some(NVME_PF));
    assert_eq!(vf.device_id, NVME_VF_DEVICE);
}

#[test]
fn topology_refuses_a_cursor_past_the_end_and_a_stale_generation() {
    let mut rig = started();
    let (generation, items) = all_items(&mut rig);
    let end = items.len() as u32;
    let last = page(&mut rig, end, None);
    assert!(last.items.is_empty() && last.next.is_none());
    assert_eq!(
        refusal(
            &mut rig,
            Request::Topology {
                cursor: TopologyCursor(end + 1),
                generation: None,
            }
        ),
        Error::BadCursor {
            cursor: TopologyCursor(end + 1)
        }
    );
    assert_eq!(ask(&mut rig, bind(0, 0, &[GPU_ID])), Response::Done);
    let Error::StaleGeneration { current } = refusal(
        &mut rig,
        Request::Topology {
            cursor: TopologyCursor(6),
            generation: Some(generation),
        },
    ) else {
        panic!("a bind changes the generation");
    };
    assert_ne!(current, generation);
    assert_eq!(page(&mut rig, 0, None).generation, current);
}

#[test]
fn virtual_switch_shows_its_slots_and_upstream_link() {
    let mut rig = started();
    let info = vswitch(&mut rig, 1);
    assert_eq!(info.host, HostIndex(1));
    assert_eq!(info.upstream.state, LinkState::Up);
    let states: Vec<_> = info
        .slots
        .iter()
        .map(|s| (s.slot, s.state.clone()))
        .collect();
    assert_eq!(
        states,
        [
            (SlotIndex(0), SlotState::Empty),
            (SlotIndex(1), SlotState::Empty)
        ]
    );
    assert_eq!(
        refusal(&mut rig, Request::VirtualSwitch { host: HostIndex(7) }),
        Error::NoSuchHost { host: HostIndex(7) }
    );
}

#[test]
fn bind_shows_the_function_bound_in_the_slot_and_the_topology() {
    let mut rig = started();
    assert_eq!(ask(&mut rig, bind(1, 1, &[NVME_VF1])), Response::Done);
    let info = vswitch(&mut rig, 1);
    assert_eq!(
        info.slots[1].state,
        SlotState::Bound {
            functions: functions(&[NVME_VF1])
        }
    );
    assert_eq!(info.slots[0].state, SlotState::Empty);
    let (_, items) = all_items(&mut rig);
    assert_eq!(
        endpoint(&items, NVME_VF1).owner,
        Some(Owner {
            host: HostIndex(1),
            slot: SlotIndex(1)
        })
    );
    assert_eq!(
        rig.manager.bound_at(FabricHost(1), 1),
        Some(Bdf(NVME_VF1.0))
    );
}

#[test]
fn bind_refusals_name_the_cause() {
    let mut rig = started();
    assert_eq!(ask(&mut rig, bind(0, 0, &[GPU_ID])), Response::Done);
    let owner = Owner {
        host: HostIndex(0),
        slot: SlotIndex(0),
    };
    assert_eq!(
        refusal(&mut rig, bind(1, 0, &[GPU_ID])),
        Error::EndpointBusy {
            fabric_id: GPU_ID,
            owner
        }
    );
    assert_eq!(
        refusal(&mut rig, bind(0, 0, &[NVME_VF1])),
        Error::SlotOccupied {
            host: HostIndex(0),
            slot: SlotIndex(0),
            bound: GPU_ID
        }
    );
    assert_eq!(
        refusal(&mut rig, bind(0, 1, &[FabricId(0x0900)])),
        Error::NoSuchEndpoint {
            fabric_id: FabricId(0x0900)
        }
    );
    assert_eq!(
        refusal(&mut rig, bind(0, 2, &[NVME_VF1])),
        Error::NoSuchSlot {
            host: HostIndex(0),
            slot: SlotIndex(2)
        }
    );
    assert_eq!(
        refusal(&mut rig, bind(3, 0, &[NVME_VF1])),
        Error::NoSuchHost { host: HostIndex(3) }
    );
    assert_eq!(refusal(&mut rig, bind(0, 1, &[])), Error::NoFunctions);
    // A slot holds one function in this manager.
    assert_eq!(
        refusal(&mut rig, bind(0, 1, &[NVME_PF, NVME_VF1])),
        Error::Unsupported
    );
    // The PF has VFs enabled, so its host could take a VF bound to another
    // host away: the VF's binding is named as what must go first.
    assert_eq!(ask(&mut rig, bind(1, 0, &[NVME_VF1])), Response::Done);
    assert_eq!(
        refusal(&mut rig, bind(0, 1, &[NVME_PF])),
        Error::EndpointBusy {
            fabric_id: NVME_VF1,
            owner: Owner {
                host: HostIndex(1),
                slot: SlotIndex(0)
            }
        }
    );
}

#[test]
fn bind_and_unbind_honour_the_generation_precondition() {
    let mut rig = started();
    let before = vswitch(&mut rig, 0).generation;
    let stale = Generation(before.0.wrapping_add(1));
    let Request::Bind {
        host,
        slot,
        functions,
        ..
    } = bind(0, 0, &[GPU_ID])
    else {
        unreachable!("built as a bind");
    };
    assert_eq!(
        refusal(
            &mut rig,
            Request::Bind {
                host,
                slot,
                functions: functions.clone(),
                if_generation: Some(stale),
            }
        ),
        Error::StaleGeneration { current: before }
    );
    assert_eq!(vswitch(&mut rig, 0).slots[0].state, SlotState::Empty);
    assert_eq!(
        ask(
            &mut rig,
            Request::Bind {
                host,
                slot,
                functions,
                if_generation: Some(before),
            }
        ),
        Response::Done
    );
    let after = vswitch(&mut rig, 0).generation;
    assert_ne!(after, before);
    assert_eq!(
        refusal(
            &mut rig,
            Request::Unbind {
                host,
                slot,
                mode: UnbindMode::Graceful,
                if_generation: Some(before),
            }
        ),
        Error::StaleGeneration { current: after }
    );
}

/// The host's hot-plug driver takes slot `slot` of the host on `port` into
/// use as Linux's pciehp does: bus numbers (upstream port: bus 1 → 2..=4,
/// slot `s` → bus 3 + s), the port's MSI (address 0xFEE0_0000, data
/// 0x40 plus the slot, enabled), then Hot-Plug Interrupt Enable with the events of a
/// slot that has an Attention Button: Attention Button Pressed, Data Link
/// Layer State Changed (§7.5.3.10); and Presence Detect Changed.
fn host_arms_slot(rig: &mut Rig, port: u8, slot: u8) -> Bdf {
    use weft_fabric::pcie::config::msi::{
        message_control as msi_control, MESSAGE_ADDRESS, MESSAGE_CONTROL,
    };
    use weft_fabric::pcie::config::pcie_cap::slot_control;
    use weft_fabric::pcie::tlp::ConfigType;
    rig.write(
        port,
        ConfigType::Type0,
        Bdf::new(1, 0, 0),
        0x18,
        0x0004_0201,
    );
    let downstream = Bdf::new(2, slot, 0);
    let bus = 3 + u32::from(slot);
    rig.write(
        port,
        ConfigType::Type1,
        downstream,
        0x18,
        bus << 16 | bus << 8 | 2,
    );
    let msi = rig
        .manager
        .virtual_switch_on(SWITCH_ID, PortIndex(port))
        .expect("a host port")
        .downstream[usize::from(slot)]
    .caps
    .msi
    .offset;
    rig.write(
        port,
        ConfigType::Type1,
        downstream,
        msi + MESSAGE_ADDRESS,
        0xfee0_0000,
    );
    rig.write(
        port,
        ConfigType::Type1,
        downstream,
        msi + 0x0c,
        0x40 + u32::from(slot),
    );
    rig.write16(
        port,
        ConfigType::Type1,
        downstream,
        msi + MESSAGE_CONTROL,
        msi_control::ENABLE,
    );
    rig.write_slot_control(
        port,
        downstream,
        slot_control::HOT_PLUG_INTERRUPT_ENABLE
            | slot_control::ATTENTION_BUTTON_PRESSED_ENABLE
            | slot_control::PRESENCE_DETECT_CHANGED_ENABLE
            | slot_control::DLL_STATE_CHANGED_ENABLE,
    );
    // The command completed (§6.7.3.2); the driver clears it (RW1C).
    let (_, status) = rig.slot_registers(port, downstream);
    clear_slot_events(rig, port, downstream, status);
    downstream
}

/// The host writes `events` back to Slot Status: RW1C (§7.5.3.11).
fn clear_slot_events(rig: &mut Rig, port: u8, downstream: Bdf, events: u16) {
    use weft_fabric::pcie::config::pcie_cap::{slot_status, SLOT_STATUS};
    use weft_fabric::pcie::tlp::ConfigType;
    let pcie = rig.slot_pcie(port, downstream);
    rig.write16(
        port,
        ConfigType::Type1,
        downstream,
        pcie + SLOT_STATUS,
        events & slot_status::EVENTS,
    );
}

fn operation(rig: &mut Rig, op: OperationId) -> OperationState {
    match ask(rig, Request::OperationStatus { op }) {
        Response::Operation(report) => {
            assert_eq!(report.op, op);
            report.state
        }
        other => panic!("expected an operation report, got {other:?}"),
    }
}

fn in_progress(response: Response) -> OperationId {
    match response {
        Response::InProgress { op } => op,
        other => panic!("expected an operation in progress, got {other:?}"),
    }
}

/// §7.5.3.9: what the managed and graceful modes need — an Attention
/// Button, a Power Controller, and the indicators pciehp blinks — with
/// Command Completed reported (No Command Completed Support clear).
#[test]
fn virtual_slots_have_an_attention_button_a_power_controller_and_indicators() {
    use weft_fabric::pcie::config::pcie_cap::{slot_capabilities as cap, SLOT_CAPABILITIES};
    use weft_fabric::pcie::tlp::ConfigType;
    let mut rig = started();
    let downstream = host_arms_slot(&mut rig, HOST0, 1);
    let pcie = rig.slot_pcie(HOST0, downstream);
    let caps = rig.read(
        HOST0,
        ConfigType::Type1,
        downstream,
        pcie + SLOT_CAPABILITIES,
    );
    for (bit, name) in [
        (cap::ATTENTION_BUTTON, "Attention Button Present"),
        (cap::POWER_CONTROLLER, "Power Controller Present"),
        (cap::ATTENTION_INDICATOR, "Attention Indicator Present"),
        (cap::POWER_INDICATOR, "Power Indicator Present"),
        (cap::HOT_PLUG_CAPABLE, "Hot-Plug Capable"),
    ] {
        assert_ne!(caps & bit, 0, "{name}");
    }
    assert_eq!(caps & cap::NO_COMMAND_COMPLETED, 0);
}

/// §6.7.3.2: a write to Slot Control is a command; the port sets Command
/// Completed when it is done, which software clears by writing 1 (RW1C,
/// §7.5.3.11) and not by writing 0; with Command Completed Interrupt
/// Enable the completion raises the port's MSI (§6.7.3.4).
#[test]
fn a_slot_control_write_completes_as_a_command() {
    use weft_fabric::pcie::config::pcie_cap::{slot_control, slot_status, Indicator};
    let mut rig = started();
    let downstream = host_arms_slot(&mut rig, HOST0, 0);
    let (control, status) = rig.slot_registers(HOST0, downstream);
    assert_eq!(status & slot_status::COMMAND_COMPLETED, 0, "{status:#x}");
    rig.write_slot_control(HOST0, downstream, Indicator::Blink.set_power(control));
    let (control, status) = rig.slot_registers(HOST0, downstream);
    assert_eq!(Indicator::power(control), Indicator::Blink);
    assert_ne!(status & slot_status::COMMAND_COMPLETED, 0, "{status:#x}");
    clear_slot_events(&mut rig, HOST0, downstream, 0);
    let (_, kept) = rig.slot_registers(HOST0, downstream);
    assert_ne!(
        kept & slot_status::COMMAND_COMPLETED,
        0,
        "writing 0 keeps it"
    );
    clear_slot_events(&mut rig, HOST0, downstream, slot_status::COMMAND_COMPLETED);
    let (_, cleared) = rig.slot_registers(HOST0, downstream);
    assert_eq!(cleared & slot_status::COMMAND_COMPLETED, 0);
    let before = rig.host.msis.len();
    rig.write_slot_control(
        HOST0,
        downstream,
        Indicator::On.set_power(control) | slot_control::COMMAND_COMPLETED_INTERRUPT_ENABLE,
    );
    assert_eq!(rig.host.msis.len(), before + 1, "the completion interrupts");
    assert_eq!(rig.host.msis[before].2.data, 0x40);
}

/// A managed unbind (§6.7.1.5): the switch presses the slot's Attention
/// Button and sends the MSI the host programmed; the unbind runs until the
/// host's driver powers the slot off, and is then done: the slot empty,
/// the function free for another host, the log saying how.
#[test]
fn a_managed_unbind_waits_for_the_host_to_power_the_slot_off() {
    use weft_fabric::pcie::config::pcie_cap::{slot_status, Indicator};
    let mut rig = started();
    let downstream = host_arms_slot(&mut rig, HOST0, 1);
    assert_eq!(ask(&mut rig, bind(0, 1, &[GPU_ID])), Response::Done);
    let (_, status) = rig.slot_registers(HOST0, downstream);
    clear_slot_events(&mut rig, HOST0, downstream, status);
    let msis = rig.host.msis.len();
    let from = rig.manager.events().next_sequence();
    let op = in_progress(ask(&mut rig, unbind(0, 1, UnbindMode::Managed)));

    let (control, status) = rig.slot_registers(HOST0, downstream);
    assert_ne!(
        status & slot_status::ATTENTION_BUTTON_PRESSED,
        0,
        "{status:#x}"
    );
    assert_ne!(
        status & slot_status::PRESENCE_DETECT_STATE,
        0,
        "still there"
    );
    assert_eq!(rig.host.msis.len(), msis + 1, "the button's interrupt");
    assert_eq!(rig.host.msis[msis].2.data, 0x41);
    assert_eq!(
        operation(&mut rig, op),
        OperationState::Running { percent: 0 }
    );
    assert_eq!(
        vswitch(&mut rig, 0).slots[1].state,
        SlotState::Unbinding {
            functions: functions(&[GPU_ID]),
            mode: UnbindMode::Managed
        }
    );
    // Another request that would wait is refused, naming the one under way.
    for mode in [UnbindMode::Managed, UnbindMode::Graceful] {
        assert_eq!(
            refusal(&mut rig, unbind(0, 1, mode)),
            Error::UnbindInProgress {
                host: HostIndex(0),
                slot: SlotIndex(1),
                op
            }
        );
    }

    // The host's driver: clear the event, blink, release the device (the
    // slot keeps it meanwhile), power off.
    clear_slot_events(
        &mut rig,
        HOST0,
        downstream,
        slot_status::ATTENTION_BUTTON_PRESSED,
    );
    rig.write_slot_control(HOST0, downstream, Indicator::Blink.set_power(control));
    assert_eq!(
        operation(&mut rig, op),
        OperationState::Running { percent: 0 }
    );
    assert_eq!(rig.manager.bound_at(FabricHost(0), 1), Some(Bdf(GPU_ID.0)));
    rig.power_off_slot(HOST0, downstream);

    assert_eq!(operation(&mut rig, op), OperationState::Succeeded);
    assert_eq!(vswitch(&mut rig, 0).slots[1].state, SlotState::Empty);
    let (_, status) = rig.slot_registers(HOST0, downstream);
    assert_eq!(
        status & slot_status::PRESENCE_DETECT_STATE,
        0,
        "{status:#x}"
    );
    assert!(rig.plane.id_map(HOST0).is_empty());
    let log = events_from(&mut rig, u64::from(from));
    assert!(kinds(&log).contains(&EventKind::Unbound {
        host: HostIndex(0),
        slot: SlotIndex(1),
        fabric_id: GPU_ID,
        mode: UnbindMode::Managed
    }));
    assert_eq!(ask(&mut rig, bind(1, 0, &[GPU_ID])), Response::Done);
}

/// A graceful unbind presses nothing: it waits until the host powers the
/// slot off on its own; a slot already powered off is unbound at once.
#[test]
fn a_graceful_unbind_waits_for_the_host_and_not_for_a_powered_off_slot() {
    use weft_fabric::pcie::config::pcie_cap::slot_status;
    let mut rig = started();
    let slot0 = host_arms_slot(&mut rig, HOST0, 0);
    let slot1 = host_arms_slot(&mut rig, HOST0, 1);
    assert_eq!(ask(&mut rig, bind(0, 0, &[GPU_ID])), Response::Done);
    assert_eq!(ask(&mut rig, bind(0, 1, &[NVME_VF2])), Response::Done);
    let msis = rig.host.msis.len();
    let op = in_progress(ask(&mut rig, unbind(0, 0, UnbindMode::Graceful)));
    let (_, status) = rig.slot_registers(HOST0, slot0);
    assert_eq!(status & slot_status::ATTENTION_BUTTON_PRESSED, 0);
    assert_eq!(rig.host.msis.len(), msis, "no interrupt");
    assert_eq!(
        operation(&mut rig, op),
        OperationState::Running { percent: 0 }
    );
    rig.power_off_slot(HOST0, slot0);
    assert_eq!(operation(&mut rig, op), OperationState::Succeeded);

    // Slot 1: the host powers it off first (the function stays bound, its
    // link down), then the unbind is done at once.
    rig.power_off_slot(HOST0, slot1);
    assert!(matches!(
        vswitch(&mut rig, 0).slots[1].state,
        SlotState::Bound { .. }
    ));
    assert_eq!(
        ask(&mut rig, unbind(0, 1, UnbindMode::Graceful)),
        Response::Done
    );
    let info = vswitch(&mut rig, 0);
    assert!(info.slots.iter().all(|s| s.state == SlotState::Empty));
    assert!(rig.plane.id_map(HOST0).is_empty());
    assert_eq!(ask(&mut rig, bind(1, 0, &[GPU_ID])), Response::Done);
}

/// A host that never answers the button leaves the operation running, to
/// poll; a surprise unbind takes the function away and ends it.
#[test]
fn a_surprise_unbind_overrides_one_the_host_never_answers() {
    let mut rig = started();
    host_arms_slot(&mut rig, HOST0, 0);
    assert_eq!(ask(&mut rig, bind(0, 0, &[GPU_ID])), Response::Done);
    let from = rig.manager.events().next_sequence();
    let op = in_progress(ask(&mut rig, unbind(0, 0, UnbindMode::Managed)));
    for _ in 0..3 {
        assert_eq!(
            operation(&mut rig, op),
            OperationState::Running { percent: 0 }
        );
    }
    assert_eq!(
        ask(&mut rig, unbind(0, 0, UnbindMode::Surprise)),
        Response::Done
    );
    assert_eq!(operation(&mut rig, op), OperationState::Succeeded);
    assert_eq!(vswitch(&mut rig, 0).slots[0].state, SlotState::Empty);
    let log = events_from(&mut rig, u64::from(from));
    assert!(kinds(&log).contains(&EventKind::Unbound {
        host: HostIndex(0),
        slot: SlotIndex(0),
        fabric_id: GPU_ID,
        mode: UnbindMode::Surprise
    }));
    assert_eq!(
        refusal(
            &mut rig,
            Request::OperationStatus {
                op: OperationId(op.0 + 1)
            }
        ),
        Error::NoSuchOperation {
            op: OperationId(op.0 + 1)
        }
    );
}

/// The button's interrupt cannot be queued to the host: the unbind is
/// refused with Busy and nothing changed (the slot bound, Attention Button
/// Pressed clear, the generation kept), so that trying again presses it.
#[test]
fn a_managed_unbind_whose_interrupt_cannot_be_sent_changes_nothing() {
    use weft_fabric::pcie::config::pcie_cap::slot_status;
    let mut rig = started();
    let downstream = host_arms_slot(&mut rig, HOST0, 0);
    assert_eq!(ask(&mut rig, bind(0, 0, &[GPU_ID])), Response::Done);
    let (_, status) = rig.slot_registers(HOST0, downstream);
    clear_slot_events(&mut rig, HOST0, downstream, status);
    let before = vswitch(&mut rig, 0);
    rig.host.queue_full = true;
    assert!(matches!(
        refusal(&mut rig, unbind(0, 0, UnbindMode::Managed)),
        Error::Busy { .. }
    ));
    assert_eq!(vswitch(&mut rig, 0), before);
    let (_, status) = rig.slot_registers(HOST0, downstream);
    assert_eq!(status & slot_status::ATTENTION_BUTTON_PRESSED, 0);
    rig.host.queue_full = false;
    let msis = rig.host.msis.len();
    in_progress(ask(&mut rig, unbind(0, 0, UnbindMode::Managed)));
    assert_eq!(rig.host.msis.len(), msis + 1, "pressed again, and heard");
}

#[test]
fn unbind_refusals_name_the_cause() {
    let mut rig = started();
    assert_eq!(
        refusal(&mut rig, unbind(0, 0, UnbindMode::Graceful)),
        Error::SlotEmpty {
            host: HostIndex(0),
            slot: SlotIndex(0)
        }
    );
    assert_eq!(
        refusal(&mut rig, unbind(0, 5, UnbindMode::Graceful)),
        Error::NoSuchSlot {
            host: HostIndex(0),
            slot: SlotIndex(5)
        }
    );
    assert_eq!(
        refusal(&mut rig, unbind(2, 0, UnbindMode::Managed)),
        Error::NoSuchHost { host: HostIndex(2) }
    );
}

#[test]
fn a_bind_before_enumeration_is_told_to_retry() {
    let mut rig = rig();
    assert!(matches!(
        refusal(&mut rig, bind(0, 0, &[GPU_ID])),
        Error::Busy { retry_after_ms } if retry_after_ms > 0
    ));
}

#[test]
fn firmware_update_requests_go_to_the_boards_service_and_identify_advertises_it() {
    let mut rig = started();
    let erased = |size: u32| MemoryFlash::new(vec![0xFF; size as usize], SECTOR_SIZE);
    let images = [erased(4 * SECTOR_SIZE), erased(4 * SECTOR_SIZE)];
    let mut update = FirmwareUpdate::new(
        images,
        erased(2 * SECTOR_SIZE),
        erased(2 * SECTOR_SIZE),
        ImageSlot::B,
    )
    .expect("erased");
    let image = [0xA5; 100];
    let requests = [
        (
            Request::FirmwarePrepare {
                size: 100,
                digest: Digest(Sha256::digest(image).into()),
            },
            &[][..],
        ),
        (Request::FirmwareChunk { offset: 0 }, &image[..]),
        (Request::FirmwareStatus, &[][..]),
        (Request::Identify, &[][..]),
    ];
    let answers: Vec<Response> = requests
        .iter()
        .map(|(request, trailing)| {
            let hardware = Hardware {
                config: &mut rig.fabric,
                fabric: &mut rig.plane.switch,
                hosts: &mut rig.host,
                links: &mut Links,
                firmware: Some(&mut update),
                timer: None,
                board: &mut TestBoard::default(),
            };
            handle(&mut rig.manager, &BOARD, request, trailing, hardware)
        })
        .collect();
    assert_eq!(answers[0], Response::Done);
    assert_eq!(answers[1], Response::ChunkAccepted { next_offset: 100 });
    let Response::FirmwareStatus(status) = &answers[2] else {
        panic!("expected a status, got {:?}", answers[2]);
    };
    assert_eq!(status.state, UpdateState::Verified);
    // Running from B, the image went to A.
    assert_eq!(status.running, ImageSlot::B);
    assert_eq!(update.image_flash(ImageSlot::A).contents()[..100], image);
    let Response::Identity(identity) = &answers[3] else {
        panic!("expected an identity, got {:?}", answers[3]);
    };
    assert!(identity
        .capabilities
        .contains(Capabilities::FIRMWARE_UPDATE));
}

/// Answers `request` with `update` as the board's firmware update service.
fn ask_with_firmware(
    rig: &mut Rig,
    update: &mut dyn FirmwareService,
    request: &Request,
    trailing: &[u8],
) -> Response {
    let hardware = Hardware {
        config: &mut rig.fabric,
        fabric: &mut rig.plane.switch,
        hosts: &mut rig.host,
        links: &mut Links,
        firmware: Some(update),
        timer: None,
        board: &mut TestBoard::default(),
    };
    handle(&mut rig.manager, &BOARD, request, trailing, hardware)
}

/// The kinds of the events a client reads from `from` on, through the handler.
fn firmware_events_from(
    rig: &mut Rig,
    update: &mut dyn FirmwareService,
    from: EventSeq,
) -> (Vec<EventKind>, EventSeq) {
    match ask_with_firmware(rig, update, &Request::ReadEvents { from }, &[]) {
        Response::Events(page) => (kinds(&page), page.next),
        other => panic!("expected an event page, got {other:?}"),
    }
}

#[test]
fn a_client_reads_the_firmware_updates_milestones_from_the_event_log() {
    let mut rig = started();
    let from = events_from(&mut rig, 0).next;
    let erased = |size: u32| MemoryFlash::new(vec![0xFF; size as usize], SECTOR_SIZE);
    let images = [erased(4 * SECTOR_SIZE), erased(4 * SECTOR_SIZE)];
    let mut update = FirmwareUpdate::new(
        images,
        erased(2 * SECTOR_SIZE),
        erased(2 * SECTOR_SIZE),
        ImageSlot::A,
    )
    .expect("erased");
    let image = [0x3C; 100];
    let prepare = Request::FirmwarePrepare {
        size: 100,
        digest: Digest(Sha256::digest(image).into()),
    };
    assert_eq!(
        ask_with_firmware(&mut rig, &mut update, &prepare, &[]),
        Response::Done
    );
    let chunk = Request::FirmwareChunk { offset: 0 };
    assert_eq!(
        ask_with_firmware(&mut rig, &mut update, &chunk, &image),
        Response::ChunkAccepted { next_offset: 100 }
    );
    let Response::CommitPrepared { token } =
        ask_with_firmware(&mut rig, &mut update, &Request::FirmwarePrepareCommit, &[])
    else {
        panic!("expected a token");
    };
    let commit = Request::FirmwareCommit { token };
    assert_eq!(
        ask_with_firmware(&mut rig, &mut update, &commit, &[]),
        Response::Done
    );
    let (seen, from) = firmware_events_from(&mut rig, &mut update, from);
    assert_eq!(
        seen,
        [EventKind::FirmwareStaged, EventKind::FirmwareCommitted]
    );

    // The next start runs the image on trial, and it checks in.
    let (images, mut boot_flash, staging) = update.into_flash();
    let start = boot(&mut boot_flash).expect("reads");
    let mut update = FirmwareUpdate::new(images, boot_flash, staging, start.slot).expect("reads");
    update.note_start(&Handoff {
        chosen: start.slot,
        kind: start.kind,
        running: Some(start.slot),
    });
    assert_eq!(update.check_in(), Ok(true));
    let (seen, _) = firmware_events_from(&mut rig, &mut update, from);
    assert_eq!(
        seen,
        [
            EventKind::Booted {
                reason: BootReason::FirmwareTrial
            },
            EventKind::FirmwareCheckedIn { slot: ImageSlot::B },
        ]
    );
}

#[test]
fn requests_not_served_get_typed_answers() {
    let mut rig = started();
    for request in [
        Request::SaveConfig,
        Request::RestoreConfig,
        Request::FirmwareStatus,
        // The data plane clears a port's counters together only.
        Request::ClearCounters {
            port: None,
            kind: Some(CounterKind::RxTlps),
        },
        // The board has no CSR window, flash or reset.
        Request::CsrRead {
            addr: global::ID.address(0, 0),
        },
        Request::ResetArm {
            scope: ResetScope::Firmware,
        },
    ] {
        assert_eq!(refusal(&mut rig, request), Error::Unsupported);
    }
    assert_eq!(
        refusal(&mut rig, Request::OperationStatus { op: OperationId(9) }),
        Error::NoSuchOperation { op: OperationId(9) }
    );
}

fn events_from(rig: &mut Rig, from: u64) -> EventPage {
    match ask(
        rig,
        Request::ReadEvents {
            from: EventSeq(from),
        },
    ) {
        Response::Events(page) => page,
        other => panic!("expected an event page, got {other:?}"),
    }
}

fn kinds(page: &EventPage) -> Vec<EventKind> {
    page.events.iter().map(|e| e.kind).collect()
}

#[test]
fn a_port_whose_device_hung_is_listed_and_logged_not_responding() {
    // A device on port 4 that completes no configuration request (PCIe
    // Base 6.0 §2.8): enumeration leaves the port not responding.
    const HUNG: u8 = 4;
    let mut rig = rig();
    let mut hung = FakeDevice::new(vec![plain_function(
        0,
        identity(0x10de, 0x2330, 0x03_02_00),
        [Some(Bar::memory32(16 << 20)), None, None, None, None, None],
        false,
    )]);
    hung.hung = true;
    rig.fabric.devices[usize::from(HUNG)] = Some(hung);
    let start = |rig: &mut Rig| {
        let mut clock = rig.clock.clone();
        rig.manager
            .start(&mut rig.fabric, &mut clock, &mut rig.plane.switch, 0)
            .expect("the fabric enumerates");
    };
    start(&mut rig);

    let (_, items) = all_items(&mut rig);
    let roles: Vec<PortRole> = items
        .iter()
        .filter_map(|i| match i {
            TopologyItem::Port(p) => Some(p.role),
            _ => None,
        })
        .collect();
    assert_eq!(
        roles[2..6],
        [
            PortRole::Endpoint,
            PortRole::Endpoint,
            PortRole::NotResponding,
            PortRole::Unused,
        ]
    );
    let at = PortRef {
        switch: SwitchId(SWITCH_ID),
        port: WirePort(HUNG),
    };
    let not_responding = |page: &EventPage| {
        kinds(page)
            .into_iter()
            .filter(|kind| matches!(kind, EventKind::PortNotResponding { .. }))
            .collect::<Vec<_>>()
    };
    let first = events_from(&mut rig, 0);
    assert_eq!(
        not_responding(&first),
        [EventKind::PortNotResponding { at }]
    );
    // Enumerated again and still hung: nothing new to log.
    start(&mut rig);
    let again = events_from(&mut rig, first.next.0);
    assert_eq!(not_responding(&again), []);
}

#[test]
fn the_event_log_shows_enumeration_then_a_bind_and_an_unbind() {
    let mut rig = started();
    let first = events_from(&mut rig, 0);
    assert_eq!(first.oldest, EventSeq(0), "nothing was overwritten yet");
    let mut added: Vec<_> = kinds(&first)
        .into_iter()
        .map(|kind| match kind {
            EventKind::EndpointAdded { fabric_id } => fabric_id,
            other => panic!("enumeration logs only added functions, got {other:?}"),
        })
        .collect();
    added.sort();
    assert_eq!(added, [GPU_ID, NVME_PF, NVME_VF1, NVME_VF2]);
    let seqs: Vec<u64> = first.events.iter().map(|e| e.seq.0).collect();
    assert_eq!(seqs, [0, 1, 2, 3], "numbered in order from 0");
    assert_eq!(first.next, EventSeq(4));
    // The links left reset at 0, and no function may be asked anything
    // for 100 ms after (PCIe Base 6.0 §6.6.1): enumeration found them later.
    assert!(first.events.iter().all(|e| e.time_ms >= 100), "{first:?}");

    // The caller tells the manager the time before each call.
    rig.manager.set_time(5_000_000_000);
    assert_eq!(ask(&mut rig, bind(1, 1, &[NVME_VF1])), Response::Done);
    rig.manager.set_time(5_250_000_000);
    assert_eq!(
        ask(&mut rig, unbind(1, 1, UnbindMode::Surprise)),
        Response::Done
    );
    let after = events_from(&mut rig, first.next.0);
    assert_eq!(
        kinds(&after),
        [
            EventKind::Bound {
                host: HostIndex(1),
                slot: SlotIndex(1),
                fabric_id: NVME_VF1
            },
            EventKind::Unbound {
                host: HostIndex(1),
                slot: SlotIndex(1),
                fabric_id: NVME_VF1,
                mode: UnbindMode::Surprise
            },
        ]
    );
    let times: Vec<u64> = after.events.iter().map(|e| e.time_ms).collect();
    assert_eq!(times, [5_000, 5_250]);
    assert!(after.events[0].seq >= first.next);
    assert!(after.events[1].seq > after.events[0].seq);
    assert!(after.next > after.events[1].seq);
    // Read again from where it ended: nothing new.
    let again = events_from(&mut rig, after.next.0);
    assert!(again.events.is_empty());
    assert_eq!(again.next, after.next);
}

#[test]
fn an_event_log_read_says_what_was_overwritten_and_pages_the_rest() {
    let mut rig = started();
    // Four functions enumerated (0..=3), then error messages from the GPU
    // (ERR_NONFATAL, message code 0x31, PCIe Base 6.0 §2.2.8.3) until the
    // ring has wrapped.
    let severity = ErrorSeverity::from_message_code(0x31).expect("ERR_NONFATAL");
    let errors = 2 * EVENT_LOG_CAPACITY;
    for _ in 0..errors {
        rig.manager.record_error_message(Bdf(GPU_ID.0), severity);
    }
    let recorded = (4 + errors) as u64;
    let oldest = recorded - EVENT_LOG_CAPACITY as u64;

    let page = events_from(&mut rig, 0);
    assert_eq!(
        page.oldest,
        EventSeq(oldest),
        "0..{oldest} were overwritten"
    );
    assert_eq!(page.events.len(), EVENTS_PAGE_LEN);
    let seqs: Vec<u64> = page.events.iter().map(|e| e.seq.0).collect();
    let expected: Vec<u64> = (oldest..oldest + EVENTS_PAGE_LEN as u64).collect();
    assert_eq!(seqs, expected);
    assert_eq!(page.next, EventSeq(oldest + EVENTS_PAGE_LEN as u64));
    assert!(page.events.iter().all(|e| e.kind
        == EventKind::Aer {
            fabric_id: GPU_ID,
            severity: AerSeverity::NonFatal,
            status: 0
        }));
    // A full page fits one datagram.
    let mut out = [0u8; MAX_DATAGRAM];
    let sent = Header::request(1, SwitchId(SWITCH_ID), 1);
    encode_response(
        &sent.reply(SwitchId(SWITCH_ID)),
        &Response::Events(page.clone()),
        &[],
        &Key::insecure_public(),
        &mut out,
    )
    .expect("a page fits a datagram");

    // The rest follows page by page until the newest.
    let mut seen = page.events.len() as u64;
    let mut next = page.next;
    while next.0 < recorded {
        let page = events_from(&mut rig, next.0);
        assert!(!page.events.is_empty());
        assert_eq!(page.events[0].seq, next);
        seen += page.events.len() as u64;
        next = page.next;
    }
    assert_eq!(
        seen, EVENT_LOG_CAPACITY as u64,
        "every entry held is read once"
    );
    assert_eq!(next, EventSeq(recorded));
    // A number past the newest (a switch that restarted) reads nothing and
    // is told where the log is.
    let ahead = events_from(&mut rig, recorded + 1000);
    assert!(ahead.events.is_empty());
    assert_eq!(ahead.next, EventSeq(recorded));
}

fn config_read(rig: &mut Rig, target: FabricId, offset: u16, width: AccessWidth) -> u32 {
    match ask(
        rig,
        Request::ConfigRead {
            target,
            offset,
            width,
        },
    ) {
        Response::Config {
            target: read,
            offset: at,
            value,
        } => {
            assert_eq!((read, at), (target, offset));
            value
        }
        other => panic!("expected a config value, got {other:?}"),
    }
}

fn config_write(target: FabricId, offset: u16, width: AccessWidth, value: u32) -> Request {
    Request::ConfigWrite {
        target,
        offset,
        width,
        value,
    }
}

#[test]
fn config_read_returns_the_bytes_at_the_offset() {
    let mut rig = started();
    // PCIe Base 6.0 §7.5.1.1: Vendor ID at 00h, Device ID at 02h, Base
    // Class at 0Bh.
    assert_eq!(
        config_read(&mut rig, GPU_ID, 0x00, AccessWidth::Dword),
        0x2330_10de
    );
    assert_eq!(
        config_read(&mut rig, GPU_ID, 0x02, AccessWidth::Word),
        0x2330
    );
    assert_eq!(config_read(&mut rig, GPU_ID, 0x0b, AccessWidth::Byte), 0x03);
    // The manager placed the GPU's BARs and enabled decoding and mastering.
    let (_, items) = all_items(&mut rig);
    let bar0 = endpoint(&items, GPU_ID).bars[0].fabric_address;
    assert_eq!(
        u64::from(config_read(&mut rig, GPU_ID, type0::BAR0, AccessWidth::Dword) & !0xf),
        bar0
    );
    let command_bits = config_read(&mut rig, GPU_ID, header::COMMAND, AccessWidth::Word);
    assert_eq!(
        command_bits & u32::from(command::MEMORY_SPACE | command::BUS_MASTER),
        u32::from(command::MEMORY_SPACE | command::BUS_MASTER)
    );
    // Raw access is not the host's view: a VF's own Vendor and Device ID
    // read all ones (§9.3.4.1.1-2).
    assert_eq!(
        config_read(&mut rig, NVME_VF2, 0x00, AccessWidth::Dword),
        0xffff_ffff
    );
}

#[test]
fn config_access_refusals_name_the_cause() {
    let mut rig = rig();
    // Not enumerated yet: no function has its fabric ID.
    assert!(matches!(
        refusal(&mut rig, config_write(GPU_ID, 0x3c, AccessWidth::Byte, 1)),
        Error::Busy { retry_after_ms } if retry_after_ms > 0
    ));
    let mut rig = started();
    assert_eq!(
        refusal(
            &mut rig,
            Request::ConfigRead {
                target: FabricId(0x0900),
                offset: 0,
                width: AccessWidth::Dword
            }
        ),
        Error::NoSuchEndpoint {
            fabric_id: FabricId(0x0900)
        }
    );
    // §7.2.2: configuration space is 4 KiB.
    assert_eq!(
        refusal(
            &mut rig,
            Request::ConfigRead {
                target: GPU_ID,
                offset: 0x1000,
                width: AccessWidth::Byte
            }
        ),
        Error::ConfigOutOfRange { offset: 0x1000 }
    );
    // §2.2.7: one request carries one DW, so an access may not straddle two.
    assert_eq!(
        refusal(
            &mut rig,
            Request::ConfigRead {
                target: GPU_ID,
                offset: 0x102,
                width: AccessWidth::Dword
            }
        ),
        Error::Misaligned {
            offset: 0x102,
            width: AccessWidth::Dword
        }
    );
    assert_eq!(
        refusal(&mut rig, config_write(GPU_ID, 0x3d, AccessWidth::Word, 0)),
        Error::Misaligned {
            offset: 0x3d,
            width: AccessWidth::Word
        }
    );
}

#[test]
fn config_write_reaches_a_register_the_fabric_does_not_own() {
    let mut rig = started();
    // Interrupt Line (3Ch) is read-write scratch for software (§7.5.1.1.13).
    assert_eq!(
        ask(
            &mut rig,
            config_write(GPU_ID, header::INTERRUPT_LINE, AccessWidth::Byte, 0x5a)
        ),
        Response::Done
    );
    assert_eq!(
        rig.fabric.function(GPU, 0).read_u8(header::INTERRUPT_LINE),
        0x5a
    );
    assert_eq!(
        config_read(&mut rig, GPU_ID, header::INTERRUPT_LINE, AccessWidth::Byte),
        0x5a
    );
    // The neighbouring Interrupt Pin byte was not written.
    assert_eq!(
        config_read(&mut rig, GPU_ID, header::INTERRUPT_PIN, AccessWidth::Byte),
        u32::from(rig.fabric.function(GPU, 0).read_u8(header::INTERRUPT_PIN))
    );
    // Status (06h) is beside Command in one DW; writing only its bytes is
    // allowed (its error bits are write-1-to-clear, §7.5.1.1.4).
    assert_eq!(
        ask(
            &mut rig,
            config_write(GPU_ID, header::STATUS, AccessWidth::Word, 0)
        ),
        Response::Done
    );
}

#[test]
fn config_write_refuses_what_the_fabric_programmed() {
    let mut rig = started();
    let gpu_before = rig.fabric.function(GPU, 0).clone();
    let sriov_at = rig.fabric.devices[usize::from(NVME)]
        .as_ref()
        .expect("the NVMe drive")
        .functions[0]
        .sriov
        .as_ref()
        .expect("SR-IOV")
        .0
        .offset;
    // (function, offset, width, the first byte the fabric owns)
    for (target, offset, width, owned) in [
        // Command: Memory Space and Bus Master (§7.5.1.1.3).
        (GPU_ID, header::COMMAND, AccessWidth::Word, 0x04),
        (GPU_ID, header::COMMAND, AccessWidth::Dword, 0x04),
        (GPU_ID, header::COMMAND + 1, AccessWidth::Byte, 0x05),
        // The BARs (§7.5.1.2.1) and the Expansion ROM BAR (§7.5.1.2.4).
        (GPU_ID, type0::BAR0, AccessWidth::Dword, 0x10),
        (GPU_ID, 0x27, AccessWidth::Byte, 0x27),
        (GPU_ID, type0::EXPANSION_ROM_BASE, AccessWidth::Dword, 0x30),
        // NumVFs (§9.3.3.7).
        (
            NVME_PF,
            sriov_at + sriov::NUM_VFS,
            AccessWidth::Word,
            sriov_at + sriov::NUM_VFS,
        ),
    ] {
        assert_eq!(
            refusal(&mut rig, config_write(target, offset, width, 0)),
            Error::FabricOwnedRegister {
                fabric_id: target,
                offset: owned
            },
            "a write of {width:?} at {offset:#x} of {target:?}"
        );
    }
    assert_eq!(
        rig.fabric.function(GPU, 0),
        &gpu_before,
        "nothing was written"
    );
    assert_eq!(
        config_read(
            &mut rig,
            NVME_PF,
            sriov_at + sriov::NUM_VFS,
            AccessWidth::Word
        ),
        2
    );
}

#[test]
fn a_failed_config_access_carries_the_completion_status() {
    let mut rig = started();
    // The device is taken away: its port's link answers nothing, which
    // the fake fabric completes with Unsupported Request (§2.3.1).
    rig.fabric.devices[usize::from(GPU)] = None;
    assert_eq!(
        refusal(
            &mut rig,
            Request::ConfigRead {
                target: GPU_ID,
                offset: 0,
                width: AccessWidth::Dword
            }
        ),
        Error::ConfigAccessFailed {
            fabric_id: GPU_ID,
            status: CompletionStatus::UnsupportedRequest
        }
    );
}

#[test]
fn config_write_refuses_a_reset_of_the_function() {
    let mut rig = started();
    let space = rig.fabric.function(GPU, 0).clone();
    let express = find_capability(&space, cap_id::PCI_EXPRESS)
        .expect("a well-formed list")
        .expect("a PCI Express capability");
    let pm = find_capability(&space, cap_id::POWER_MANAGEMENT)
        .expect("a well-formed list")
        .expect("a Power Management capability");
    let control = express + DEVICE_CONTROL;
    // Initiate Function Level Reset, Device Control bit 15 (§7.5.3.4):
    // as a word, and as the byte holding it.
    let flr = u32::from(device_control::INITIATE_FLR);
    for (offset, width, value) in [
        (control, AccessWidth::Word, flr),
        (control, AccessWidth::Dword, flr),
        (control + 1, AccessWidth::Byte, flr >> 8),
    ] {
        assert_eq!(
            refusal(&mut rig, config_write(GPU_ID, offset, width, value)),
            Error::FabricOwnedRegister {
                fabric_id: GPU_ID,
                offset: control + 1
            },
            "{width:?} at {offset:#x}"
        );
    }
    // D3hot, PowerState 11b (§7.5.2.2).
    assert_eq!(
        refusal(
            &mut rig,
            config_write(GPU_ID, pm + PMCSR, AccessWidth::Word, 0b11)
        ),
        Error::FabricOwnedRegister {
            fabric_id: GPU_ID,
            offset: pm + PMCSR
        }
    );
    assert_eq!(rig.fabric.function(GPU, 0), &space, "nothing was written");
    // The rest of Device Control is the operator's, and D0 stays allowed.
    let relaxed_ordering = u32::from(device_control::RELAXED_ORDERING);
    let before = config_read(&mut rig, GPU_ID, control, AccessWidth::Word);
    assert_eq!(
        ask(
            &mut rig,
            config_write(
                GPU_ID,
                control,
                AccessWidth::Word,
                before ^ relaxed_ordering
            )
        ),
        Response::Done
    );
    assert_eq!(
        config_read(&mut rig, GPU_ID, control, AccessWidth::Word),
        before ^ relaxed_ordering
    );
    assert_eq!(
        ask(
            &mut rig,
            config_write(GPU_ID, pm + PMCSR, AccessWidth::Word, 0)
        ),
        Response::Done
    );
}

#[test]
fn links_and_isolation_drops_are_logged_with_the_port_they_happened_at() {
    let mut rig = started();
    let from = events_from(&mut rig, 0).next;
    let local = SwitchIndex::LOCAL;
    rig.manager.record_link(local, PortIndex(HOST1), false);
    rig.manager.record_link(local, PortIndex(GPU), true);
    rig.manager
        .record_isolation_drops(local, PortIndex(NVME), IsolationCheck::SpoofedRequester, 7);
    let at = |port| PortRef {
        switch: SwitchId(SWITCH_ID),
        port: WirePort(port),
    };
    assert_eq!(
        kinds(&events_from(&mut rig, from.0)),
        [
            EventKind::HostLinkDown { host: HostIndex(1) },
            EventKind::PortLinkUp { at: at(GPU) },
            EventKind::IsolationDrops {
                at: at(NVME),
                check: WireCheck::SpoofedRequester,
                count: 7
            },
        ]
    );
}

// ---------------------------------------------------------------- counters and port control

fn counters(rig: &mut Rig, port: u8) -> WireCounters {
    match ask(
        rig,
        Request::ReadCounters {
            port: WirePort(port),
        },
    ) {
        Response::Counters(counters) => counters,
        other => panic!("expected counters, got {other:?}"),
    }
}

fn value(counters: &WireCounters, kind: CounterKind) -> Option<u64> {
    counters
        .values
        .iter()
        .find(|c| c.kind == kind)
        .map(|c| c.value)
}

/// A one-DW memory write from the GPU's function into host 0's aperture.
fn gpu_write(rig: &mut Rig) {
    let header = memory(
        weft_fabric::pcie::tlp::MemoryOp::Write,
        Bdf::from(GPU_ID),
        0,
        weft_regs::aperture::HOST_APERTURE_BASE,
        1,
    );
    rig.plane.send(GPU, header, &[1, 2, 3, 4]);
}

#[test]
fn counters_are_the_data_planes_and_clear_per_port() {
    let mut rig = started();
    // The GPU is bound to no host: its DMA is dropped by isolation.
    for _ in 0..3 {
        gpu_write(&mut rig);
    }
    // Not a TLP at all.
    let _ = rig.plane.switch.ingress(PortIndex(NVME), &[0xff; 3]);
    let model = rig
        .plane
        .switch
        .counters(PortIndex(GPU))
        .expect("the port exists")
        .clone();
    let gpu = counters(&mut rig, GPU);
    assert_eq!(gpu.port, WirePort(GPU));
    assert_eq!(value(&gpu, CounterKind::RxTlps), Some(model.ingress.tlps()));
    assert_eq!(value(&gpu, CounterKind::RxPosted), Some(3));
    assert_eq!(
        value(&gpu, CounterKind::RxWireBytes),
        Some(model.ingress.bytes)
    );
    assert!(model.ingress.bytes >= 3 * 16, "three headers and payloads");
    assert_eq!(value(&gpu, CounterKind::DroppedUnbound), Some(3));
    assert_eq!(value(&gpu, CounterKind::DroppedIsolation), Some(3));
    assert_eq!(value(&gpu, CounterKind::DroppedNoRoute), Some(0));
    assert_eq!(value(&gpu, CounterKind::TxTlps), Some(model.egress.tlps()));
    // What the data plane does not count is left out, not sent as 0.
    for kind in [
        CounterKind::RxPayloadBytes,
        CounterKind::DroppedPoisoned,
        CounterKind::LinkDowns,
    ] {
        assert_eq!(value(&gpu, kind), None, "{kind:?}");
    }
    let nvme = counters(&mut rig, NVME);
    assert_eq!(value(&nvme, CounterKind::DroppedMalformed), Some(1));
    assert_eq!(value(&nvme, CounterKind::RxTlps), Some(0));

    let clear = |port: Option<u8>| Request::ClearCounters {
        port: port.map(WirePort),
        kind: None,
    };
    assert_eq!(ask(&mut rig, clear(Some(GPU))), Response::Done);
    let gpu = counters(&mut rig, GPU);
    assert!(gpu.values.iter().all(|c| c.value == 0), "{gpu:?}");
    let nvme = counters(&mut rig, NVME);
    assert_eq!(
        value(&nvme, CounterKind::DroppedMalformed),
        Some(1),
        "other ports keep theirs"
    );
    assert_eq!(ask(&mut rig, clear(None)), Response::Done);
    let nvme = counters(&mut rig, NVME);
    assert_eq!(value(&nvme, CounterKind::DroppedMalformed), Some(0));

    for request in [Request::ReadCounters { port: WirePort(9) }, clear(Some(9))] {
        assert_eq!(
            refusal(&mut rig, request),
            Error::NoSuchPort { port: WirePort(9) }
        );
    }
}

fn port(port: u8, action: PortAction) -> Request {
    Request::PortControl {
        port: WirePort(port),
        action,
    }
}

#[test]
fn links_are_retrained_and_hot_reset_on_endpoint_ports_only() {
    let mut rig = started();
    let before = events_from(&mut rig, 0).next;
    let reset_at = rig.clock.0.get();
    assert_eq!(
        ask(&mut rig, port(GPU, PortAction::Retrain)),
        Response::Done
    );
    assert_eq!(rig.clock.0.get(), reset_at, "a retrain waits for nothing");
    assert_eq!(
        ask(&mut rig, port(GPU, PortAction::HotReset)),
        Response::Done
    );
    // §6.6.1: the manager waited before asking the GPU again.
    assert!(rig.clock.0.get() >= reset_at + 100_000_000);
    assert_eq!(
        rig.plane.switch.take_link_requests(),
        [
            (PortIndex(GPU), weft_regs::tables::LinkRequest::Retrain),
            (PortIndex(GPU), weft_regs::tables::LinkRequest::HotReset),
        ]
    );
    assert_eq!(
        kinds(&events_from(&mut rig, before.0)),
        vec![
            EventKind::PortControlled {
                port: WirePort(GPU),
                action: PortAction::Retrain
            },
            EventKind::PortControlled {
                port: WirePort(GPU),
                action: PortAction::HotReset
            },
        ]
    );
    // A host port is the switch's upstream side of its link (§7.5.3.7).
    for action in [PortAction::Retrain, PortAction::HotReset] {
        assert_eq!(
            refusal(&mut rig, port(HOST1, action)),
            Error::HostPort {
                port: WirePort(HOST1),
                host: HostIndex(1)
            }
        );
    }
    assert_eq!(
        refusal(&mut rig, port(PORTS as u8, PortAction::Retrain)),
        Error::NoSuchPort {
            port: WirePort(PORTS as u8)
        }
    );
    // A board without a timer cannot wait out the reset.
    let hardware = Hardware {
        config: &mut rig.fabric,
        fabric: &mut rig.plane.switch,
        hosts: &mut rig.host,
        links: &mut Links,
        firmware: None,
        timer: None,
        board: &mut TestBoard::default(),
    };
    let request = port(GPU, PortAction::HotReset);
    assert_eq!(
        handle(&mut rig.manager, &BOARD, &request, &[], hardware),
        Response::Error(Error::Unsupported)
    );
    assert!(rig.plane.switch.take_link_requests().is_empty());
}

/// §6.6.1, §7.5.3.11: a hot reset below a switch downstream port takes
/// its link down; the bound host's virtual downstream port shows it as
/// Data Link Layer State Changed with Link Active set again, and raises
/// the hot-plug MSI the host armed, once.
#[test]
fn a_hot_reset_shows_the_bound_hosts_slot_its_link_went_down_and_up() {
    use weft_fabric::pcie::config::pcie_cap::slot_status;
    let mut rig = started();
    let downstream = host_arms_slot(&mut rig, HOST0, 0);
    assert_eq!(ask(&mut rig, bind(HOST0, 0, &[GPU_ID])), Response::Done);
    let (_, status) = rig.slot_registers(HOST0, downstream);
    clear_slot_events(&mut rig, HOST0, downstream, status & slot_status::EVENTS);
    let msis = rig.host.msis.len();

    assert_eq!(
        ask(&mut rig, port(GPU, PortAction::HotReset)),
        Response::Done
    );

    let (_, status) = rig.slot_registers(HOST0, downstream);
    assert_ne!(status & slot_status::DLL_STATE_CHANGED, 0, "{status:#x}");
    assert_eq!(rig.host.msis.len(), msis + 1, "one hot-plug interrupt");
    assert_eq!(rig.host.msis[msis].2.data, 0x40);
    // A retrain keeps the link's Data Link Layer up: nothing to tell.
    clear_slot_events(&mut rig, HOST0, downstream, slot_status::EVENTS);
    assert_eq!(
        ask(&mut rig, port(GPU, PortAction::Retrain)),
        Response::Done
    );
    let (_, status) = rig.slot_registers(HOST0, downstream);
    assert_eq!(status & slot_status::DLL_STATE_CHANGED, 0, "{status:#x}");
    assert_eq!(rig.host.msis.len(), msis + 1);
}

#[test]
fn a_port_is_disabled_and_enabled_only_when_nothing_depends_on_it() {
    let mut rig = started();
    let before = events_from(&mut rig, 0).next;
    assert_eq!(
        ask(&mut rig, port(GPU, PortAction::Disable)),
        Response::Done
    );
    assert_eq!(rig.plane.role(GPU), weft_regs::tables::PortRole::Disabled);
    gpu_write(&mut rig);
    let gpu = counters(&mut rig, GPU);
    assert_eq!(value(&gpu, CounterKind::DroppedPortDisabled), Some(1));
    assert_eq!(value(&gpu, CounterKind::DroppedUnbound), Some(0));
    // Nothing below a disabled port is bound.
    assert_eq!(
        refusal(&mut rig, bind(HOST0, 0, &[GPU_ID])),
        Error::PortDisabled {
            port: WirePort(GPU)
        }
    );

    assert_eq!(ask(&mut rig, port(GPU, PortAction::Enable)), Response::Done);
    assert!(matches!(
        rig.plane.role(GPU),
        weft_regs::tables::PortRole::Endpoint { owner: None, .. }
    ));
    assert_eq!(
        kinds(&events_from(&mut rig, before.0)),
        vec![
            EventKind::PortControlled {
                port: WirePort(GPU),
                action: PortAction::Disable
            },
            EventKind::PortControlled {
                port: WirePort(GPU),
                action: PortAction::Enable
            },
        ]
    );
    // Enabling an enabled port changes and logs nothing.
    let logged = events_from(&mut rig, 0).next;
    assert_eq!(ask(&mut rig, port(GPU, PortAction::Enable)), Response::Done);
    assert_eq!(events_from(&mut rig, 0).next, logged);

    // A bound function keeps its port enabled.
    assert_eq!(ask(&mut rig, bind(HOST0, 0, &[GPU_ID])), Response::Done);
    assert_eq!(
        refusal(&mut rig, port(GPU, PortAction::Disable)),
        Error::EndpointBusy {
            fabric_id: GPU_ID,
            owner: Owner {
                host: HostIndex(HOST0),
                slot: SlotIndex(0),
            },
        }
    );
    // A host's link is never disabled.
    assert_eq!(
        refusal(&mut rig, port(HOST1, PortAction::Disable)),
        Error::HostPort {
            port: WirePort(HOST1),
            host: HostIndex(1),
        }
    );
    assert!(matches!(
        rig.plane.role(HOST1),
        weft_regs::tables::PortRole::Host { .. }
    ));
    assert_eq!(
        refusal(&mut rig, port(9, PortAction::Disable)),
        Error::NoSuchPort { port: WirePort(9) }
    );
}

#[test]
fn port_control_before_enumeration_is_told_to_retry() {
    let mut rig = rig();
    assert!(matches!(
        refusal(&mut rig, port(GPU, PortAction::Disable)),
        Error::Busy { retry_after_ms } if retry_after_ms > 0
    ));
}

// ---------------------------------------------------------------- CSR diagnostics

#[test]
fn csr_read_answers_from_the_window_and_refuses_what_is_not_a_register() {
    let mut rig = started();
    let mut board = TestBoard::full();
    assert_eq!(
        ask_on(
            &mut rig,
            &mut board,
            Request::CsrRead {
                addr: global::ID.address(0, 0)
            }
        ),
        Response::Csr {
            addr: global::ID.address(0, 0),
            value: u32::from_be_bytes(*b"WEFT"),
        }
    );
    // The window takes whole, aligned words only.
    let odd = global::PORTS.address(0, 0) + 2;
    assert_eq!(
        refusal_on(&mut rig, &mut board, Request::CsrRead { addr: odd }),
        Error::Misaligned {
            offset: odd,
            width: AccessWidth::Dword,
        }
    );
    // Between global's last register (0x14) and its block's end; and
    // outside the window altogether.
    for addr in [global::ID.address(0, 0) + 0x80, 0x1000_0000] {
        assert_eq!(
            refusal_on(&mut rig, &mut board, Request::CsrRead { addr }),
            Error::CsrOutOfRange { addr }
        );
    }
}

#[test]
fn csr_write_reaches_only_the_counter_clear() {
    let mut rig = started();
    let mut board = TestBoard::full();
    for addr in [
        port_csr::CONTROL.address(u32::from(GPU), 0),
        window_csr::BASE_LOW.address(u32::from(HOST0), 0),
        global::ID.address(0, 0),
    ] {
        assert_eq!(
            refusal_on(&mut rig, &mut board, Request::CsrWrite { addr, value: 0 }),
            Error::FabricOwnedCsr { addr }
        );
    }
    assert!(board.csr_writes.is_empty(), "nothing refused was written");
    // A client of protocol version 3 does not know the refusal.
    let mut old = Response::Error(Error::FabricOwnedCsr { addr: 0 });
    old.downgrade_for(3);
    assert_eq!(old, Response::Error(Error::Unsupported));

    let clear = counter_control::CLEAR.address(0, 0);
    let gpu_bit = 1 << GPU;
    assert_eq!(
        ask_on(
            &mut rig,
            &mut board,
            Request::CsrWrite {
                addr: clear,
                value: gpu_bit
            }
        ),
        Response::Done
    );
    assert_eq!(board.csr_writes, [(clear, gpu_bit)]);
}

// ---------------------------------------------------------------- saved configuration

#[test]
fn a_saved_configuration_is_restored_on_request() {
    let mut rig = started();
    let mut board = TestBoard::full();
    assert_eq!(
        refusal_on(&mut rig, &mut board, Request::RestoreConfig),
        Error::NoSavedConfig
    );
    assert_eq!(ask(&mut rig, bind(HOST0, 0, &[GPU_ID])), Response::Done);
    assert_eq!(
        ask_on(&mut rig, &mut board, Request::SaveConfig),
        Response::Done
    );
    // The record's layout (weft_fabric::persist): magic "WFTB", version 3.
    let flash = board.flash.as_ref().expect("flash");
    assert_eq!(flash.bytes()[..6], *b"WFTB\x03\x00");

    assert_eq!(
        ask(&mut rig, unbind(HOST0, 0, UnbindMode::Surprise)),
        Response::Done
    );
    let unbound = vswitch(&mut rig, HOST0).generation;
    assert_eq!(
        ask_on(&mut rig, &mut board, Request::RestoreConfig),
        Response::Done
    );
    let restored = vswitch(&mut rig, HOST0);
    assert_eq!(
        restored.slots[0].state,
        SlotState::Bound {
            functions: functions(&[GPU_ID])
        }
    );
    assert!(
        restored.generation.0 > unbound.0,
        "the generation moves on, never back to the saved one"
    );
    // Restoring again changes nothing: the binding is in place.
    assert_eq!(
        ask_on(&mut rig, &mut board, Request::RestoreConfig),
        Response::Done
    );
    assert_eq!(vswitch(&mut rig, HOST0).generation, restored.generation);
    let logged = kinds(&events_from(&mut rig, 0));
    assert!(logged.contains(&EventKind::ConfigSaved));
    assert!(logged.contains(&EventKind::ConfigRestored));

    // A damaged record (one payload bit) is no record to apply.
    board.flash.as_mut().expect("flash").bytes_mut()[13] ^= 1;
    assert_eq!(
        refusal_on(&mut rig, &mut board, Request::RestoreConfig),
        Error::SavedConfigCorrupt
    );
}

/// A flash whose every erase fails, as a worn or write-protected part's.
struct FailingFlash;

impl Flash for FailingFlash {
    fn size(&self) -> u32 {
        8192
    }

    fn read(
        &mut self,
        _offset: u32,
        buf: &mut [u8],
    ) -> Result<(), weft_fabric::persist::FlashError> {
        buf.fill(0xff);
        Ok(())
    }

    fn erase(&mut self, offset: u32, _len: u32) -> Result<(), weft_fabric::persist::FlashError> {
        Err(weft_fabric::persist::FlashError::Failed { offset })
    }

    fn write(&mut self, offset: u32, _data: &[u8]) -> Result<(), weft_fabric::persist::FlashError> {
        Err(weft_fabric::persist::FlashError::Failed { offset })
    }
}

/// A board whose configuration flash fails.
struct FailingBoard(FailingFlash);

impl Board for FailingBoard {
    fn read_csr(&mut self, _address: u32) -> Result<u32, BoardFault> {
        Err(BoardFault::Unsupported)
    }

    fn write_csr(&mut self, _address: u32, _value: u32) -> Result<(), BoardFault> {
        Err(BoardFault::Unsupported)
    }

    fn config_flash(&mut self) -> Option<&mut dyn Flash> {
        Some(&mut self.0)
    }

    fn resets(&self, _scope: ResetScope) -> bool {
        false
    }

    fn schedule_reset(&mut self, _scope: ResetScope) {}
}

#[test]
fn a_save_that_the_flash_fails_names_the_operation() {
    let mut rig = started();
    let hardware = Hardware {
        config: &mut rig.fabric,
        fabric: &mut rig.plane.switch,
        hosts: &mut rig.host,
        links: &mut Links,
        firmware: None,
        timer: None,
        board: &mut FailingBoard(FailingFlash),
    };
    assert_eq!(
        handle(
            &mut rig.manager,
            &BOARD,
            &Request::SaveConfig,
            &[],
            hardware
        ),
        Response::Error(Error::FlashFailed { op: FlashOp::Erase })
    );
}

// ---------------------------------------------------------------- reset

fn armed(rig: &mut Rig, board: &mut TestBoard, scope: ResetScope) -> Token {
    match ask_on(rig, board, Request::ResetArm { scope }) {
        Response::ResetArmed {
            token,
            expires_in_ms,
        } => {
            assert_eq!(expires_in_ms, 10_000);
            token
        }
        other => panic!("expected an armed reset, got {other:?}"),
    }
}

#[test]
fn a_reset_needs_the_armed_token_before_it_expires() {
    let mut rig = started();
    let mut board = TestBoard::full();
    let trigger = |token| Request::ResetTrigger { token };
    assert_eq!(
        refusal_on(&mut rig, &mut board, trigger(Token(7))),
        Error::BadToken
    );
    let first = armed(&mut rig, &mut board, ResetScope::Firmware);
    let token = armed(&mut rig, &mut board, ResetScope::Switch);
    assert_ne!(first, token, "each arm hands out a new token");
    // Arming again replaced the first token.
    assert_eq!(
        refusal_on(&mut rig, &mut board, trigger(first)),
        Error::BadToken
    );
    assert_eq!(
        refusal_on(&mut rig, &mut board, trigger(Token(token.0 ^ 1))),
        Error::BadToken
    );
    assert!(board.resets.is_empty());
    assert_eq!(ask_on(&mut rig, &mut board, trigger(token)), Response::Done);
    assert_eq!(board.resets, [ResetScope::Switch]);
    // A trigger is used up: a new request with it does not reset again.
    assert_eq!(
        refusal_on(&mut rig, &mut board, trigger(token)),
        Error::BadToken
    );
    assert_eq!(board.resets.len(), 1);

    let late = armed(&mut rig, &mut board, ResetScope::Firmware);
    rig.clock.0.set(rig.clock.0.get() + 10_000_000_001);
    assert_eq!(
        refusal_on(&mut rig, &mut board, trigger(late)),
        Error::TokenExpired
    );
    assert_eq!(board.resets.len(), 1);
}

// ---------------------------------------------------------------- NumVFs

fn set_vfs(endpoint: FabricId, num_vfs: u16) -> Request {
    Request::SetNumVfs { endpoint, num_vfs }
}

/// NumVFs and VF Enable of the NVMe PF, as the device holds them.
fn device_vfs(rig: &Rig) -> (u16, bool) {
    let pf = &rig.fabric.devices[usize::from(NVME)]
        .as_ref()
        .expect("the NVMe drive")
        .functions[0];
    let cap = pf.sriov.as_ref().expect("SR-IOV").0;
    (
        pf.space.read_u16(cap.offset + sriov::NUM_VFS),
        vf_enabled(&pf.space, cap),
    )
}

/// Runs a NumVFs change that waits for its VFs to the end.
fn change_vfs(rig: &mut Rig, num_vfs: u16) {
    let op = in_progress(ask(rig, set_vfs(NVME_PF, num_vfs)));
    // §9.3.3.3.1: the VFs are not accessed before 100 ms have passed.
    assert!(matches!(
        operation(rig, op),
        OperationState::Running { percent } if percent < 100
    ));
    assert_eq!(device_vfs(rig), (num_vfs, true));
    rig.clock.0.set(rig.clock.0.get() + 100_000_000);
    assert_eq!(operation(rig, op), OperationState::Succeeded);
    assert_eq!(
        operation(rig, op),
        OperationState::Succeeded,
        "kept for later polls"
    );
}

/// Unbinds and NumVFs changes draw their operation IDs from one space:
/// each gets its own, and `OperationStatus` answers for either while it
/// runs and after it ends, the one that ended first still known once the
/// other has.
#[test]
fn unbinds_and_num_vfs_changes_share_one_operation_id_space() {
    let mut rig = started();
    let slot = host_arms_slot(&mut rig, HOST0, 0);
    assert_eq!(ask(&mut rig, bind(HOST0, 0, &[GPU_ID])), Response::Done);
    let unbinding = in_progress(ask(&mut rig, unbind(HOST0, 0, UnbindMode::Graceful)));
    let changing = in_progress(ask(&mut rig, set_vfs(NVME_PF, 3)));
    assert_ne!(unbinding, changing);
    assert_eq!(
        operation(&mut rig, unbinding),
        OperationState::Running { percent: 0 }
    );
    assert!(matches!(
        operation(&mut rig, changing),
        OperationState::Running { percent } if percent < 100
    ));

    // The host powers the slot off: the unbind ends, the change runs on.
    rig.power_off_slot(HOST0, slot);
    assert_eq!(operation(&mut rig, unbinding), OperationState::Succeeded);
    assert!(matches!(
        operation(&mut rig, changing),
        OperationState::Running { .. }
    ));
    // §9.3.3.3.1: the VFs answer 100 ms after VF Enable.
    rig.clock.0.set(rig.clock.0.get() + 100_000_000);
    assert_eq!(operation(&mut rig, changing), OperationState::Succeeded);
    assert_eq!(
        operation(&mut rig, unbinding),
        OperationState::Succeeded,
        "the earlier outcome is kept"
    );
    let unknown = OperationId(unbinding.0.max(changing.0) + 1);
    assert_eq!(
        refusal(&mut rig, Request::OperationStatus { op: unknown }),
        Error::NoSuchOperation { op: unknown }
    );
}

fn vfs_listed(rig: &mut Rig) -> Vec<EndpointInfo> {
    all_items(rig)
        .1
        .into_iter()
        .filter_map(|item| match item {
            TopologyItem::Endpoint(e) if e.physical_function == Some(NVME_PF) => Some(e),
            _ => None,
        })
        .collect()
}

#[test]
fn num_vfs_changes_at_run_time_inside_the_reserved_regions() {
    let mut rig = started();
    let before = vfs_listed(&mut rig);
    let ids: Vec<FabricId> = before.iter().map(|vf| vf.fabric_id).collect();
    assert_eq!(ids, [NVME_VF1, NVME_VF2]);
    let vf1_bar = before[0].bars[0].fabric_address;

    change_vfs(&mut rig, 1);
    let one = vfs_listed(&mut rig);
    assert_eq!(one.len(), 1);
    assert_eq!(one[0].fabric_id, NVME_VF1);
    assert_eq!(one[0].bars[0].fabric_address, vf1_bar);

    // NumVFs 0: VF Enable stays clear, nothing to wait for.
    assert_eq!(ask(&mut rig, set_vfs(NVME_PF, 0)), Response::Done);
    assert_eq!(device_vfs(&rig), (0, false));
    assert!(vfs_listed(&mut rig).is_empty());
    let pf = endpoint(&all_items(&mut rig).1, NVME_PF);
    assert_eq!(pf.sriov.map(|s| s.num_vfs), Some(0));

    change_vfs(&mut rig, 2);
    let two = vfs_listed(&mut rig);
    let ids: Vec<FabricId> = two.iter().map(|vf| vf.fabric_id).collect();
    assert_eq!(ids, [NVME_VF1, NVME_VF2]);
    // §9.3.3.14: VF n's BAR is the VF BAR's base + (n - 1) × the per-VF
    // size, 16 KiB for this drive.
    assert_eq!(two[0].bars[0].fabric_address, vf1_bar);
    assert_eq!(two[1].bars[0].fabric_address, vf1_bar + (16 << 10));
    assert!(
        kinds(&events_from(&mut rig, 0)).contains(&EventKind::NumVfsChanged {
            fabric_id: NVME_PF,
            num_vfs: 2
        })
    );
    // The same NumVFs again is already done.
    assert_eq!(ask(&mut rig, set_vfs(NVME_PF, 2)), Response::Done);

    // Up to TotalVFs (4): VF 3 and 4 are on the bus after the PF's
    // (0x0400 + 0x80 + 2 × 0x40 = 0x0500), which enumeration reserved.
    change_vfs(&mut rig, 4);
    let four = vfs_listed(&mut rig);
    let ids: Vec<FabricId> = four.iter().map(|vf| vf.fabric_id).collect();
    assert_eq!(
        ids,
        [NVME_VF1, NVME_VF2, FabricId(0x0500), FabricId(0x0540)]
    );
    assert_eq!(four[3].bars[0].fabric_address, vf1_bar + 3 * (16 << 10));
}

#[test]
fn num_vfs_refusals_name_the_cause() {
    let mut rig = started();
    for (request, refused) in [
        (
            set_vfs(GPU_ID, 1),
            Error::NotSriovCapable { fabric_id: GPU_ID },
        ),
        (
            set_vfs(NVME_VF1, 1),
            Error::NotSriovCapable {
                fabric_id: NVME_VF1,
            },
        ),
        (
            set_vfs(FabricId(0x0900), 1),
            Error::NoSuchEndpoint {
                fabric_id: FabricId(0x0900),
            },
        ),
        // TotalVFs is 4 (§9.3.3.6).
        (
            set_vfs(NVME_PF, 5),
            Error::TooManyVfs {
                fabric_id: NVME_PF,
                total_vfs: 4,
            },
        ),
    ] {
        assert_eq!(refusal(&mut rig, request), refused);
    }
    assert_eq!(ask(&mut rig, bind(HOST1, 1, &[NVME_VF2])), Response::Done);
    assert_eq!(
        refusal(&mut rig, set_vfs(NVME_PF, 1)),
        Error::VfBound {
            fabric_id: NVME_PF,
            vf: NVME_VF2
        }
    );
    assert_eq!(device_vfs(&rig), (2, true), "nothing changed");
    assert_eq!(
        ask(&mut rig, unbind(HOST1, 1, UnbindMode::Surprise)),
        Response::Done
    );
    assert!(matches!(
        ask(&mut rig, set_vfs(NVME_PF, 1)),
        Response::InProgress { .. }
    ));
    assert!(matches!(
        refusal(&mut rig, set_vfs(NVME_PF, 2)),
        Error::Busy { retry_after_ms } if retry_after_ms > 0
    ));
}

#[test]
fn a_saved_num_vfs_comes_back_at_the_next_start() {
    let mut running = started();
    let mut board = TestBoard::full();
    change_vfs(&mut running, 3);
    assert_eq!(
        ask_on(&mut running, &mut board, Request::SaveConfig),
        Response::Done
    );
    // The next start: a manager built from the saved settings enumerates
    // the same fabric (its devices as they power up, three VFs of four).
    let saved = weft_fabric::persist::load(board.flash.as_mut().expect("flash"))
        .expect("readable")
        .expect("a record");
    let mut next = rig();
    let mut settings = settings();
    saved.apply_to(&mut settings);
    next.manager = FabricManager::new(settings).expect("valid settings");
    let mut clock = next.clock.clone();
    next.manager
        .start(&mut next.fabric, &mut clock, &mut next.plane.switch, 0)
        .expect("the fabric enumerates");
    let ids: Vec<FabricId> = vfs_listed(&mut next)
        .iter()
        .map(|vf| vf.fabric_id)
        .collect();
    assert_eq!(ids, [NVME_VF1, NVME_VF2, FabricId(0x0500)]);
    assert_eq!(device_vfs(&next), (3, true));
}
