//! The host interface against the CSR window model: a host's configuration
//! request travels the switch into the mailbox and out of the driver, the
//! driver's completions and MSI writes leave through the injector as the
//! TLPs the spec and the endpoint models (weft-devices) say they are.

use weft_devices::interrupt::msi_write;
use weft_drivers::host::CsrHostInterface;
use weft_fabric::hw::{HostConfigRequest, HostInterface, HostSendError};
use weft_model::csr_window::{CsrWindow, INJECT_DEPTH};
use weft_model::{Destination, Packet, PortIndex, PortRole, Switch};
use weft_pcie::config::msi::MsiMessage;
use weft_pcie::tlp::*;
use weft_pcie::Bdf;
use weft_regs::driver::CsrDataPlane;
use weft_regs::tables::{DataPlane, HostIndex};

/// The switch ID of the switch whose window the tests reach.
const SWITCH: u64 = 0x5745_4654_0000_0000;
const HOST_PORT: PortIndex = PortIndex(0);
const ROOT_PORT: Bdf = Bdf::new(0, 0, 0);
/// The host's virtual upstream port, completer of the firmware's completions.
const VUSP: Bdf = Bdf::new(0x10, 0, 0);

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
    let mut host = CsrHostInterface::new(&mut window, SWITCH);
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
fn a_configuration_write_carries_its_data_little_endian() {
    let mut window = window();
    let request = config(Direction::Write, 6);
    window
        .ingress(
            HOST_PORT,
            &wire(Body::Config(request), &[0x78, 0x56, 0x34, 0x12]),
        )
        .expect("port exists");
    let received = CsrHostInterface::new(&mut window, SWITCH).receive();
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
    let mut host = CsrHostInterface::new(&mut window, SWITCH);
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
    CsrHostInterface::new(&mut window, SWITCH)
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
    CsrHostInterface::new(&mut window, SWITCH)
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
    let mut host = CsrHostInterface::new(&mut window, SWITCH);
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
    let mut host = CsrHostInterface::new(&mut window, SWITCH);
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
