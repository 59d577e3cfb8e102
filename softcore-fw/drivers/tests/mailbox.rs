//! The mailbox driver against the CSR window model. As the host interface:
//! a host's configuration request travels the switch into the mailbox and
//! out of the driver, the driver's completions and MSI writes leave through
//! the injector as the TLPs the spec and the endpoint models (weft-devices)
//! say they are. As the manager's configuration access: its requests reach
//! an endpoint model on a port's link, the endpoint's completions come back
//! through the mailbox with their status, and hosts' requests that arrive
//! meanwhile wait for the host interface. As the manager's memory access:
//! its reads and writes cross a fabric link into another switch's CSR
//! window through that switch's management BAR, and the firmware's
//! in-band fabric writes that switch's tables with them.

use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;

use weft_devices::gpu::{Gpu, GpuConfig};
use weft_devices::interrupt::msi_write;
use weft_devices::packet::{completion_for, RequestInfo};
use weft_devices::Device;
use weft_drivers::mailbox::{CsrMailbox, InjectDrops, SharedMailbox, COMPLETION_TIMEOUT_NS};
use weft_fabric::hw::{
    ConfigFault, FabricConfig, HostConfigRequest, HostInterface, HostSendError, Timer,
};
use weft_fabric::manager::FabricManager;
use weft_fabric::settings::{FabricSettings, HostPort};
use weft_fabric::virtualize::FORWARDED_TIMEOUT_NS;
use weft_model::csr_window::{CsrWindow, INJECT_DEPTH};
use weft_model::{Destination, Packet, PortIndex, PortRole, Switch};
use weft_pcie::config::msi::MsiMessage;
use weft_pcie::tlp::*;
use weft_pcie::Bdf;
use weft_regs::csr::inject;
use weft_regs::driver::{CsrBus, CsrDataPlane};
use weft_regs::soc::gpio;
use weft_regs::tables::{DataPlane, HostIndex};

/// The switch ID of the switch whose window the tests reach.
const SWITCH: u64 = 0x5745_4654_0000_0000;
const HOST_PORT: PortIndex = PortIndex(0);
const ROOT_PORT: Bdf = Bdf::new(0, 0, 0);
/// The host's virtual upstream port, completer of the firmware's completions.
const VUSP: Bdf = Bdf::new(0x10, 0, 0);
/// The fabric manager's own fabric ID.
const MANAGER: Bdf = Bdf::new(0, 0, 0);

/// A switch with host 0 on port 0 and every other port disabled, behind its CSR window.
fn window() -> CsrWindow {
    let mut window = CsrWindow::new(Switch::new(4));
    let mut plane = CsrDataPlane::new(&mut window).expect("a weft data plane");
    plane
        .set_port_role(
            HOST_PORT,
            PortRole::Host {
                host: HostIndex(0),
                proxy_id: Bdf::new(0xf0, 0, 0),
            },
        )
        .expect("port exists");
    window
}

/// A clock that moves on 1 µs every time it is read.
#[derive(Default)]
struct Steps(u64);

impl Timer for Steps {
    fn now_ns(&mut self) -> u64 {
        self.0 += 1_000;
        self.0
    }

    fn wait_until_ns(&mut self, deadline_ns: u64) {
        self.0 = self.0.max(deadline_ns);
    }
}

fn mailbox<B: CsrBus>(bus: B) -> CsrMailbox<B, Steps> {
    CsrMailbox::new(bus, Steps::default(), SWITCH, MANAGER)
}

fn config(direction: Direction, tag: u16) -> ConfigRequest {
    ConfigRequest {
        direction,
        config_type: ConfigType::Type0,
        requester: ROOT_PORT,
        tag: Tag::new(tag).expect("tag fits"),
        target: Bdf::new(0x11, 0, 0),
        register_number: 4,
        extended_register_number: 0,
        first_be: 0b1111,
    }
}

fn wire(body: Body, payload: &[u8]) -> Vec<u8> {
    let header = Header {
        digest_present: false,
        poisoned: false,
        body,
    };
    Packet::new(header, payload.to_vec())
        .to_bytes()
        .expect("a well-formed TLP")
}

#[test]
fn a_host_configuration_read_arrives_whole_with_its_port() {
    let mut window = window();
    let request = config(Direction::Read, 5);
    let forwarding = window
        .ingress(HOST_PORT, &wire(Body::Config(request), &[]))
        .expect("port exists");
    assert!(forwarding.deliveries.is_empty(), "it went to the mailbox");
    let mut host = mailbox(&mut window);
    assert_eq!(
        host.receive(),
        Some(HostConfigRequest {
            switch: SWITCH,
            port: HOST_PORT,
            request,
            data: 0
        })
    );
    assert_eq!(host.receive(), None);
    assert!(window.stray_accesses().is_empty());
}

#[test]
fn the_interrupt_stays_raised_until_every_request_is_received() {
    let mut window = window();
    mailbox(&mut window).set_interrupts(true);
    assert!(!window.interrupt(), "the mailbox is empty");
    for tag in [1, 2] {
        window
            .ingress(
                HOST_PORT,
                &wire(Body::Config(config(Direction::Read, tag)), &[]),
            )
            .expect("port exists");
    }
    assert!(window.interrupt());
    let mut host = mailbox(&mut window);
    assert!(host.receive().is_some());
    drop(host);
    assert!(window.interrupt(), "one request still waits");
    let mut host = mailbox(&mut window);
    assert!(host.receive().is_some());
    assert_eq!(host.receive(), None);
    drop(host);
    assert!(!window.interrupt(), "received until empty");
    window
        .ingress(
            HOST_PORT,
            &wire(Body::Config(config(Direction::Read, 3)), &[]),
        )
        .expect("port exists");
    assert!(window.interrupt());
    mailbox(&mut window).set_interrupts(false);
    assert!(!window.interrupt(), "disabled");
}

#[test]
fn a_dropped_tlp_raises_the_interrupt_until_acknowledged() {
    let mut window = window();
    mailbox(&mut window).set_interrupts(true);
    // A SEND naming a port the switch does not have, as no driver call makes.
    window.write32(
        inject::SEND.address(0, 0),
        inject::PORT.encode(9) | inject::DWORDS.encode(3),
    );
    assert!(window.interrupt());
    let mut driver = mailbox(&mut window);
    assert_eq!(
        driver.acknowledge_drops(),
        Some(InjectDrops {
            malformed: false,
            no_such_port: true
        })
    );
    assert_eq!(driver.acknowledge_drops(), None, "acknowledged once");
    drop(driver);
    assert!(!window.interrupt());
}

#[test]
fn a_configuration_write_carries_its_data_little_endian() {
    let mut window = window();
    let request = config(Direction::Write, 6);
    window
        .ingress(
            HOST_PORT,
            &wire(Body::Config(request), &[0x78, 0x56, 0x34, 0x12]),
        )
        .expect("port exists");
    let received = mailbox(&mut window).receive();
    // §7.2: byte 0 of the DW is its least significant.
    assert_eq!(received.map(|r| r.data), Some(0x1234_5678));
}

#[test]
fn tlps_other_than_configuration_requests_are_counted_and_skipped() {
    let mut window = window();
    let message = Message::new(
        ROOT_PORT,
        MessageCode::ErrCor,
        MessageRouting::ToRootComplex,
    );
    window.queue_for_cpu(HOST_PORT, &wire(Body::Message(message), &[]));
    window.queue_for_cpu(HOST_PORT, &[0xff; 8]);
    let request = config(Direction::Read, 7);
    window.queue_for_cpu(HOST_PORT, &wire(Body::Config(request), &[]));
    let mut host = mailbox(&mut window);
    assert_eq!(host.receive().map(|r| r.request), Some(request));
    assert_eq!(host.discarded(), 2);
}

#[test]
fn a_completion_leaves_the_host_port_as_a_cpld() {
    let mut window = window();
    let completion = Completion {
        locked: false,
        traffic_class: TrafficClass::default(),
        attributes: Attributes::default(),
        completer: VUSP,
        status: CompletionStatus::Successful,
        byte_count_modified: false,
        byte_count: 4,
        requester: ROOT_PORT,
        tag: Tag::new(5).expect("tag fits"),
        lower_address: 0,
        data_dw: Some(1),
    };
    mailbox(&mut window)
        .complete(SWITCH, HOST_PORT, completion, Some(0xdead_beef))
        .expect("a host port with room");
    let sent = window.take_injected();
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].to, Destination::Port(HOST_PORT));
    let header = Header {
        digest_present: false,
        poisoned: false,
        body: Body::Completion(completion),
    };
    assert_eq!(
        sent[0].packet,
        Packet::new(header, vec![0xef, 0xbe, 0xad, 0xde])
    );
}

#[test]
fn an_msi_is_the_memory_write_an_endpoint_would_send() {
    let mut window = window();
    let message = MsiMessage {
        address: 0xfee0_1000,
        data: 0x4041,
    };
    mailbox(&mut window)
        .send_msi(SWITCH, HOST_PORT, VUSP, message)
        .expect("a host port with room");
    let sent = window.take_injected();
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].packet, msi_write(VUSP, message));
}

#[test]
fn only_enabled_host_ports_are_sent_to() {
    let mut window = window();
    let message = MsiMessage {
        address: 0xfee0_0000,
        data: 1,
    };
    let mut host = mailbox(&mut window);
    for port in [PortIndex(1), PortIndex(4), PortIndex(200)] {
        assert_eq!(
            host.send_msi(SWITCH, port, VUSP, message),
            Err(HostSendError::NoSuchPort(port))
        );
    }
    // The host port of another switch is not this window's to send from.
    assert_eq!(
        host.send_msi(SWITCH + 1, HOST_PORT, VUSP, message),
        Err(HostSendError::NoSuchPort(HOST_PORT))
    );
    assert!(window.take_injected().is_empty());
}

#[test]
fn a_full_injector_is_reported_not_overrun() {
    let mut window = window();
    let message = MsiMessage {
        address: 0xfee0_0000,
        data: 1,
    };
    let mut host = mailbox(&mut window);
    for _ in 0..INJECT_DEPTH {
        host.send_msi(SWITCH, HOST_PORT, VUSP, message)
            .expect("room");
    }
    assert_eq!(
        host.send_msi(SWITCH, HOST_PORT, VUSP, message),
        Err(HostSendError::QueueFull(HOST_PORT))
    );
    assert_eq!(window.take_injected().len(), INJECT_DEPTH);
}

/// The port the GPU's link is on.
const GPU_PORT: PortIndex = PortIndex(2);
/// The fabric ID the tests give the GPU.
const GPU: Bdf = Bdf::new(3, 0, 0);

/// The window of [`window`] with a GPU (weft-devices) on [`GPU_PORT`]'s
/// link, answering every configuration request the injector sends there
/// at `now`; nothing answers on the other ports but an Unsupported Request
/// from the port, unless `silent`. `arrivals` are host requests offered
/// at the host port the moment the next request is sent.
struct Linked {
    window: CsrWindow,
    gpu: Gpu,
    now: Duration,
    silent: bool,
    arrivals: Vec<Vec<u8>>,
    /// What the board's link register (`gpio::INPUT`) shows.
    links: u32,
}

impl Linked {
    fn new(gpu: GpuConfig) -> Self {
        Linked {
            window: window(),
            gpu: Gpu::new(gpu).expect("a valid GPU"),
            now: Duration::from_secs(1),
            silent: false,
            arrivals: Vec::new(),
            links: 0,
        }
    }
}

impl CsrBus for Linked {
    fn read32(&mut self, address: u32) -> u32 {
        if address == gpio::INPUT.address(0, 0) {
            return self.links;
        }
        self.window.read32(address)
    }

    fn write32(&mut self, address: u32, value: u32) {
        self.window.write32(address, value);
        if address != inject::SEND.address(0, 0) {
            return;
        }
        for tlp in std::mem::take(&mut self.arrivals) {
            self.window.ingress(HOST_PORT, &tlp).expect("port exists");
        }
        let (gpu, now, silent) = (&mut self.gpu, self.now, self.silent);
        self.window.answer_injected_config(|port, packet| {
            if port == GPU_PORT {
                gpu.handle(now, packet).into_iter().next()
            } else if silent {
                None
            } else {
                let info = RequestInfo::of(&packet.header);
                Some(completion_for(
                    &info,
                    Bdf::default(),
                    CompletionStatus::UnsupportedRequest,
                    4,
                    0,
                    None,
                ))
            }
        });
    }
}

#[test]
fn the_managers_read_returns_what_the_function_on_the_link_holds() {
    let mut linked = Linked::new(GpuConfig::default());
    let mut manager = mailbox(&mut linked);
    let ids = manager.read(GPU_PORT, GPU, 0).expect("the GPU answers");
    let class = manager.read(GPU_PORT, GPU, 0x0b).expect("the GPU answers");
    let expected = |linked: &mut Linked, offset| {
        linked
            .gpu
            .config_read(linked.now, GPU, offset)
            .expect("a readable register")
    };
    assert_eq!(ids, expected(&mut linked, 0));
    assert_eq!(ids & 0xffff, u32::from(GpuConfig::default().vendor_id));
    assert_eq!(class, expected(&mut linked, 8), "the DW holding the byte");
    assert!(linked.window.stray_accesses().is_empty());
}

#[test]
fn the_managers_write_lands_in_the_functions_configuration_space() {
    let mut linked = Linked::new(GpuConfig::default());
    let mut manager = mailbox(&mut linked);
    // Command: Memory Space and Bus Master Enable, the low two bytes only.
    manager
        .write(GPU_PORT, GPU, 0x04, 0xffff_0006, 0b0011)
        .expect("the GPU completes the write");
    let command = linked
        .gpu
        .config_read(linked.now, GPU, 0x04)
        .expect("readable");
    assert_eq!(command & 0xffff, 0x0006);
}

#[test]
fn completion_statuses_become_the_faults_they_mean() {
    // §6.6.1: a function still booting answers Request Retry Status.
    let booting = GpuConfig {
        boot_time: Duration::from_secs(5),
        ..GpuConfig::default()
    };
    let mut linked = Linked::new(booting);
    let mut manager = mailbox(&mut linked);
    assert_eq!(
        manager.read(GPU_PORT, GPU, 0),
        Err(ConfigFault::RequestRetry)
    );
    assert_eq!(
        manager.read(PortIndex(1), Bdf::new(4, 0, 0), 0),
        Err(ConfigFault::UnsupportedRequest)
    );
    assert_eq!(
        manager.read(PortIndex(4), GPU, 0),
        Err(ConfigFault::NoSuchPort(PortIndex(4)))
    );
}

#[test]
fn a_request_to_a_port_whose_link_the_board_shows_down_ends_at_once_in_unsupported_request() {
    // Nothing answers on port 1, as nothing does on a link that is down.
    let bus = SharedBus(Rc::new(RefCell::new(Linked::new(GpuConfig::default()))));
    bus.0.borrow_mut().silent = true;
    // The board shows the GPU's link up and every other port's down.
    bus.0.borrow_mut().links =
        gpio::INPUT_LINKS_REPORTED.encode(1) | gpio::INPUT_LINK_UP.encode(1 << GPU_PORT.0);
    let mut manager = mailbox(bus.clone()).with_link_state(gpio::INPUT.address(0, 0));
    // PCIe Base 6.0 §2.9.1: a Port in DL_Down completes the non-posted
    // requests it is given with Unsupported Request; nothing is sent.
    assert_eq!(
        manager.read(PortIndex(1), GPU, 0),
        Err(ConfigFault::UnsupportedRequest)
    );
    assert!(bus.0.borrow_mut().window.take_injected().is_empty());
    assert!(
        manager.timer().now_ns() < COMPLETION_TIMEOUT_NS,
        "it did not wait for a completion"
    );
    // The GPU's link is up: its function answers.
    let ids = manager.read(GPU_PORT, GPU, 0).expect("the GPU answers");
    assert_eq!(ids & 0xffff, u32::from(GpuConfig::default().vendor_id));
    // A board that reports no links (LINKS_REPORTED clear) changes nothing:
    // the request leaves and times out.
    bus.0.borrow_mut().links = 0;
    assert_eq!(
        manager.read(PortIndex(1), GPU, 0),
        Err(ConfigFault::Timeout)
    );
}

#[test]
fn a_request_nobody_completes_times_out_and_its_late_completion_is_dropped() {
    let bus = SharedBus(Rc::new(RefCell::new(Linked::new(GpuConfig::default()))));
    bus.0.borrow_mut().silent = true;
    let mut manager = mailbox(bus.clone());
    assert_eq!(
        manager.read(PortIndex(1), GPU, 0),
        Err(ConfigFault::Timeout)
    );
    assert!(
        manager.timer().now_ns() >= COMPLETION_TIMEOUT_NS,
        "it waited the completion timeout"
    );
    // The completion arrives after all, ahead of the next request's.
    let info = RequestInfo {
        requester: MANAGER,
        tag: Tag::from_8bit(1),
        traffic_class: TrafficClass::default(),
        attributes: Attributes::default(),
    };
    let late = completion_for(
        &info,
        GPU,
        CompletionStatus::Successful,
        4,
        0,
        Some(vec![0; 4]),
    );
    let late = late.to_bytes().expect("well-formed");
    bus.0.borrow_mut().window.queue_for_cpu(PortIndex(1), &late);
    let ids = manager.read(GPU_PORT, GPU, 0).expect("the GPU answers");
    assert_eq!(ids & 0xffff, u32::from(GpuConfig::default().vendor_id));
    assert_eq!(manager.discarded(), 1);
}

#[test]
fn a_limited_wait_times_configuration_requests_out_sooner_until_lifted() {
    let bus = SharedBus(Rc::new(RefCell::new(Linked::new(GpuConfig::default()))));
    bus.0.borrow_mut().silent = true;
    let mut manager = mailbox(bus.clone());
    // A host's request the manager forwards waits the switch's timeout.
    let limit = FORWARDED_TIMEOUT_NS;
    manager.limit_completion_wait(Some(limit));
    let waited = |manager: &mut CsrMailbox<SharedBus, Steps>| {
        let start = manager.timer().now_ns();
        let result = manager.read(PortIndex(1), GPU, 0);
        (result, manager.timer().now_ns() - start)
    };
    let (result, took) = waited(&mut manager);
    assert_eq!(result, Err(ConfigFault::Timeout));
    // The timer moves 1 µs at every read of it.
    assert!(
        (limit..limit + 10_000).contains(&took),
        "waited {took} ns, not the {limit} ns limit"
    );
    // Lifted, the manager's own requests wait its whole timeout again.
    manager.limit_completion_wait(None);
    let (result, took) = waited(&mut manager);
    assert_eq!(result, Err(ConfigFault::Timeout));
    assert!(
        (COMPLETION_TIMEOUT_NS..COMPLETION_TIMEOUT_NS + 10_000).contains(&took),
        "waited {took} ns, not the manager's {COMPLETION_TIMEOUT_NS} ns"
    );
}

#[test]
fn host_requests_arriving_while_the_manager_waits_are_received_after_in_order() {
    let mut linked = Linked::new(GpuConfig::default());
    let first = config(Direction::Read, 8);
    let second = config(Direction::Read, 9);
    linked.arrivals = vec![
        wire(Body::Config(first), &[]),
        wire(Body::Config(second), &[]),
    ];
    let mut manager = mailbox(&mut linked);
    manager.read(GPU_PORT, GPU, 0).expect("the GPU answers");
    assert!(
        manager.holds_requests(),
        "taken from the mailbox, not yet received"
    );
    assert_eq!(manager.receive().map(|r| r.request), Some(first));
    assert_eq!(manager.receive().map(|r| r.request), Some(second));
    assert!(!manager.holds_requests());
    assert_eq!(manager.receive(), None);
    assert_eq!(manager.discarded(), 0);
}

/// A [`Linked`] window shared by the manager's drivers, as the firmware's
/// register accesses share the one CSR window.
#[derive(Clone)]
struct SharedBus(Rc<RefCell<Linked>>);

impl CsrBus for SharedBus {
    fn read32(&mut self, address: u32) -> u32 {
        self.0.borrow_mut().read32(address)
    }

    fn write32(&mut self, address: u32, value: u32) {
        self.0.borrow_mut().write32(address, value)
    }
}

#[test]
fn the_fabric_manager_enumerates_and_serves_hosts_through_the_mailbox() {
    let bus = SharedBus(Rc::new(RefCell::new(Linked::new(GpuConfig::default()))));
    let mut settings = FabricSettings {
        switch_id: SWITCH,
        manager_id: MANAGER,
        ..FabricSettings::default()
    };
    let host = HostPort {
        switch: SWITCH,
        port: HOST_PORT,
        host: HostIndex(0),
        slots: 2,
    };
    settings.hosts.push(host).expect("room for a host");
    let mut fabric_manager = FabricManager::new(settings).expect("valid settings");
    let mailbox = RefCell::new(mailbox(bus.clone()));
    let mut plane = CsrDataPlane::new(bus.clone()).expect("a weft data plane");
    fabric_manager
        .start(
            &mut SharedMailbox(&mailbox),
            &mut Steps::default(),
            &mut plane,
            0,
        )
        .expect("the fabric starts");
    let gpu = fabric_manager
        .inventory()
        .functions
        .iter()
        .find(|f| f.port == GPU_PORT)
        .expect("the GPU was enumerated");
    let expected = GpuConfig::default();
    assert_eq!(
        (gpu.vendor_id, gpu.device_id),
        (expected.vendor_id, expected.device_id)
    );
    assert_eq!(fabric_manager.inventory().functions.len(), 1);

    // The host reads its virtual upstream port's IDs; the answer leaves
    // the host port through the same injector.
    let request = config(Direction::Read, 10);
    bus.0
        .borrow_mut()
        .window
        .ingress(HOST_PORT, &wire(Body::Config(request), &[]))
        .expect("port exists");
    let (mut config, mut hosts) = (SharedMailbox(&mailbox), SharedMailbox(&mailbox));
    let served = fabric_manager
        .service(&mut config, &mut plane, &mut hosts)
        .expect("answered");
    assert_eq!(served, 1);
    let sent = bus.0.borrow_mut().window.take_injected();
    assert_eq!(sent.len(), 1);
    let Body::Completion(completion) = sent[0].packet.header.body else {
        panic!("a completion, not {:?}", sent[0].packet.header);
    };
    assert_eq!(
        (completion.requester, completion.tag, completion.status),
        (ROOT_PORT, request.tag, CompletionStatus::Successful)
    );
}

/// The manager's switch's port whose link leads to [`TwoSwitches::remote`].
const FABRIC_PORT: PortIndex = PortIndex(1);
/// The remote switch's port at the other end of that link.
const FAR_PORT: PortIndex = PortIndex(3);
/// The remote switch's management BAR.
const REMOTE_BAR: u64 = 0xfff0_0000;

/// The manager's switch ([`window`]) linked by a fabric port to another
/// switch whose management BAR is [`REMOTE_BAR`]: what the injector sends
/// out of [`FABRIC_PORT`] enters the remote switch at [`FAR_PORT`], and
/// what leaves that port comes back in at [`FABRIC_PORT`].
struct TwoSwitches {
    local: CsrWindow,
    remote: CsrWindow,
}

impl TwoSwitches {
    fn new() -> Self {
        let fabric = |window: &mut CsrWindow, port| {
            CsrDataPlane::new(window)
                .expect("a weft data plane")
                .set_port_role(port, PortRole::Fabric)
                .expect("port exists");
        };
        let mut local = window();
        fabric(&mut local, FABRIC_PORT);
        CsrDataPlane::new(&mut local)
            .expect("a weft data plane")
            .set_bus_route(MANAGER.bus(), Some(Destination::Cpu))
            .expect("written");
        let mut remote = CsrWindow::new(Switch::new(4));
        fabric(&mut remote, FAR_PORT);
        // As the port's configuration logic holds it once the BAR is assigned and enabled.
        let low = weft_regs::csr::global::MANAGEMENT_BAR_LOW.address(0, 0);
        let enable = weft_regs::csr::global::MANAGEMENT_ENABLE.encode(1 << FAR_PORT.0);
        remote.write32(low, REMOTE_BAR as u32 | enable);
        TwoSwitches { local, remote }
    }
}

impl CsrBus for TwoSwitches {
    fn read32(&mut self, address: u32) -> u32 {
        self.local.read32(address)
    }

    fn write32(&mut self, address: u32, value: u32) {
        self.local.write32(address, value);
        for sent in self.local.take_injected() {
            assert_eq!(sent.to, Destination::Port(FABRIC_PORT));
            let bytes = sent.packet.to_bytes().expect("well-formed");
            let back = self.remote.forward(FAR_PORT, &bytes).expect("port exists");
            for reply in back.deliveries {
                assert_eq!(
                    reply.to,
                    Destination::Port(FAR_PORT),
                    "answered on its link"
                );
                let bytes = reply.packet.to_bytes().expect("well-formed");
                self.local
                    .ingress(FABRIC_PORT, &bytes)
                    .expect("port exists");
            }
        }
    }
}

#[test]
fn the_managers_memory_requests_read_and_write_a_remote_switchs_csr_window() {
    use weft_fabric::hw::FabricMemory;
    use weft_regs::csr::{global, port, CSR_BASE, CSR_SIZE};
    let mut link = TwoSwitches::new();
    let at = |address: u32| REMOTE_BAR + u64::from(address - CSR_BASE);
    let mut manager = mailbox(&mut link);
    let id = manager.read_memory(FABRIC_PORT, at(global::ID.address(0, 0)));
    assert_eq!(id, Ok(global::ID_VALUE));
    let buses = port::BUSES.address(2, 0);
    manager
        .write_memory(FABRIC_PORT, at(buses), 0x0504)
        .expect("sent");
    assert_eq!(manager.read_memory(FABRIC_PORT, at(buses)), Ok(0x0504));
    // No register there: the window answers Completer Abort (§2.3.1).
    let hole = at(CSR_BASE + CSR_SIZE - 4);
    assert_eq!(
        manager.read_memory(FABRIC_PORT, hole),
        Err(ConfigFault::CompleterAbort)
    );
    assert_eq!(
        manager.read_memory(PortIndex(4), at(buses)),
        Err(ConfigFault::NoSuchPort(PortIndex(4)))
    );
    drop(manager);
    assert_eq!(link.remote.read32(buses), 0x0504);
    assert!(link.local.stray_accesses().is_empty());
}

#[test]
fn the_firmwares_fabric_writes_a_remote_switchs_tables_in_band() {
    use weft_fabric::hw::{Fabric, RemoteSwitch};
    use weft_fabric::inband::InbandFabric;
    let link = RefCell::new(TwoSwitches::new());
    let mailbox = RefCell::new(mailbox(LinkBus(&link)));
    let mut plane = CsrDataPlane::new(LinkBus(&link)).expect("a weft data plane");
    let mut fabric = InbandFabric::new(&mut plane, SharedMailbox(&mailbox));
    let remote = RemoteSwitch {
        id: 0x20,
        via: FABRIC_PORT,
        management_bar: Some(REMOTE_BAR),
    };
    let tables = fabric
        .remote(remote)
        .expect("a weft data plane answers there");
    assert_eq!(tables.ports(), 4);
    tables
        .set_bus_route(7, Some(Destination::Port(PortIndex(2))))
        .expect("written in-band");
    fabric
        .local()
        .set_bus_route(7, Some(Destination::Port(FABRIC_PORT)))
        .expect("written");
    let link = link.borrow();
    let buses = |window: &CsrWindow| window.switch().routes().buses[7];
    assert_eq!(buses(&link.remote), Some(Destination::Port(PortIndex(2))));
    assert_eq!(buses(&link.local), Some(Destination::Port(FABRIC_PORT)));
}

/// [`TwoSwitches`] shared by the firmware's table driver and its mailbox,
/// as both reach the one CSR window.
struct LinkBus<'a>(&'a RefCell<TwoSwitches>);

impl CsrBus for LinkBus<'_> {
    fn read32(&mut self, address: u32) -> u32 {
        self.0.borrow_mut().read32(address)
    }

    fn write32(&mut self, address: u32, value: u32) {
        self.0.borrow_mut().write32(address, value)
    }
}
