//! Given these tables and this TLP, the switch does this: the rules of
//! DESIGN.md's "Domains and translation" and the PCIe base spec, one by one.
//! Every expected value is written from the rule, not taken from a run.

use weft_model::switch::{aperture_base, DEFAULT_COMPLETION_TIMEOUT_NS};
use weft_model::*;
use weft_pcie::tlp::*;
use weft_pcie::Bdf;
use weft_regs::tables::DataPlane;

const HOST0: PortIndex = PortIndex(0);
const GPU_A: PortIndex = PortIndex(1);
const GPU_B: PortIndex = PortIndex(2);
const HOST1: PortIndex = PortIndex(3);

/// The host's root port, the requester of its requests.
const ROOT_PORT: Bdf = Bdf::new(0, 0, 0);
/// Proxy fabric IDs of the two hosts.
const PROXY0: Bdf = Bdf::new(0xf0, 0, 0);
const PROXY1: Bdf = Bdf::new(0xf1, 0, 0);
/// The GPUs' fabric IDs, and the IDs host 0 enumerated them at.
const A_FABRIC: Bdf = Bdf::new(2, 0, 0);
const B_FABRIC: Bdf = Bdf::new(3, 0, 0);
const A_HOST: Bdf = Bdf::new(0x13, 0, 0);
const B_HOST: Bdf = Bdf::new(0x14, 0, 0);
/// Host 0's virtual upstream port: completer of what the switch synthesizes for host 0.
const VUSP0: Bdf = Bdf::new(0x10, 0, 0);
/// The fabric ID the switch's endpoint ports answer with.
const SWITCH_FABRIC: Bdf = Bdf::new(1, 0, 0);

/// BAR0 of each GPU: 16 MiB, in the fabric and in host 0's domain.
const A_BAR_FABRIC: u64 = 0x40_0000_0000;
const B_BAR_FABRIC: u64 = 0x40_1000_0000;
const A_BAR_HOST: u64 = 0x9000_0000;
const B_BAR_HOST: u64 = 0x9100_0000;
const BAR_SIZE: u64 = 16 << 20;

fn host0_windows() -> Vec<Window> {
    vec![
        Window {
            base: A_BAR_HOST,
            size: BAR_SIZE,
            fabric_base: A_BAR_FABRIC,
            permissions: Permissions::READ_WRITE,
        },
        Window {
            base: B_BAR_HOST,
            size: BAR_SIZE,
            fabric_base: B_BAR_FABRIC,
            permissions: Permissions::READ_WRITE,
        },
    ]
}

/// Two hosts and two GPUs, both GPUs bound to host 0, on one switch.
fn fabric() -> Switch {
    fabric_with_ports(4)
}

/// [`fabric`] on a switch with `ports` ports, the ones past the fourth disabled.
fn fabric_with_ports(ports: usize) -> Switch {
    let mut switch = Switch::new(ports);
    let owner0 = Some(Owner {
        host: HostIndex(0),
        proxy_id: PROXY0,
    });
    switch
        .set_port(
            HOST0,
            PortTables {
                role: PortRole::Host {
                    host: HostIndex(0),
                    proxy_id: PROXY0,
                },
                windows: host0_windows(),
                id_map: vec![
                    IdMapping {
                        fabric: A_FABRIC,
                        host: A_HOST,
                    },
                    IdMapping {
                        fabric: B_FABRIC,
                        host: B_HOST,
                    },
                ],
                completer_id: VUSP0,
                ..PortTables::default()
            },
        )
        .expect("within capacity");
    for (port, bus, swizzle) in [(GPU_A, 2, 1), (GPU_B, 3, 1)] {
        switch
            .set_port(
                port,
                PortTables {
                    role: PortRole::Endpoint {
                        owner: owner0,
                        buses: (bus, bus),
                    },
                    windows: host0_windows(),
                    completer_id: SWITCH_FABRIC,
                    intx_swizzle: swizzle,
                    ..PortTables::default()
                },
            )
            .expect("within capacity");
    }
    switch
        .set_port(
            HOST1,
            PortTables {
                role: PortRole::Host {
                    host: HostIndex(1),
                    proxy_id: PROXY1,
                },
                completer_id: Bdf::new(0x20, 0, 0),
                ..PortTables::default()
            },
        )
        .expect("within capacity");
    let mut routes = RouteTables {
        addresses: vec![
            AddressRoute {
                base: A_BAR_FABRIC,
                size: BAR_SIZE,
                to: Destination::Port(GPU_A),
            },
            AddressRoute {
                base: B_BAR_FABRIC,
                size: BAR_SIZE,
                to: Destination::Port(GPU_B),
            },
            AddressRoute {
                base: aperture_base(HostIndex(0)),
                size: 1 << 52,
                to: Destination::Port(HOST0),
            },
            AddressRoute {
                base: aperture_base(HostIndex(1)),
                size: 1 << 52,
                to: Destination::Port(HOST1),
            },
        ],
        ..RouteTables::default()
    };
    routes.buses[2] = Some(Destination::Port(GPU_A));
    routes.buses[3] = Some(Destination::Port(GPU_B));
    routes.buses[0xf0] = Some(Destination::Port(HOST0));
    routes.buses[0xf1] = Some(Destination::Port(HOST1));
    routes.buses[1] = Some(Destination::Cpu);
    switch.set_routes(routes).expect("within capacity");
    switch
}

fn memory(op: MemoryOp, requester: Bdf, tag: u16, address: u64, length_dw: u16) -> Header {
    // An AtomicOp's byte enables are Reserved (§2.2.7.1).
    let atomic = op.is_atomic();
    Header {
        digest_present: false,
        poisoned: false,
        body: Body::Memory(MemoryRequest {
            op,
            traffic_class: TrafficClass::default(),
            attributes: Attributes::default(),
            address_type: AddressType::default(),
            requester,
            tag: Tag::new(tag).expect("tag fits 10 bits"),
            address,
            length_dw,
            first_be: if atomic { 0 } else { 0xf },
            last_be: if atomic || length_dw == 1 { 0 } else { 0xf },
            processing_hint: None,
        }),
    }
}

fn completion(
    completer: Bdf,
    requester: Bdf,
    tag: Tag,
    byte_count: u16,
    data_dw: Option<u16>,
) -> Header {
    Header {
        digest_present: false,
        poisoned: false,
        body: Body::Completion(Completion {
            locked: false,
            traffic_class: TrafficClass::default(),
            attributes: Attributes::default(),
            completer,
            status: CompletionStatus::Successful,
            byte_count_modified: false,
            byte_count,
            requester,
            tag,
            lower_address: 0,
            data_dw,
        }),
    }
}

fn message(requester: Bdf, code: MessageCode, routing: MessageRouting) -> Header {
    Header {
        digest_present: false,
        poisoned: false,
        body: Body::Message(Message::new(requester, code, routing)),
    }
}

fn wire(header: Header, payload: &[u8]) -> Vec<u8> {
    Packet::new(header, payload.to_vec())
        .to_bytes()
        .expect("a valid TLP")
}

fn send(switch: &mut Switch, port: PortIndex, header: Header, payload: &[u8]) -> Forwarding {
    switch
        .ingress(port, &wire(header, payload))
        .expect("port exists and has room")
}

/// The one delivery made, checked to go where expected.
fn only(forwarding: &Forwarding, to: Destination) -> &Packet {
    assert_eq!(forwarding.deliveries.len(), 1, "{forwarding:#?}");
    assert_eq!(forwarding.deliveries[0].to, to, "{forwarding:#?}");
    &forwarding.deliveries[0].packet
}

/// Checks the TLP was dropped for `reason` and answered with UR out of `port`; returns the answer.
fn refused_with_unsupported_request(
    out: &Forwarding,
    reason: DropReason,
    port: PortIndex,
) -> Completion {
    assert_eq!(out.dropped, Some(reason), "{out:#?}");
    let completion = as_completion(only(out, Destination::Port(port)));
    assert_eq!(completion.status, CompletionStatus::UnsupportedRequest);
    completion
}

fn as_memory(packet: &Packet) -> MemoryRequest {
    match packet.header.body {
        Body::Memory(m) => m,
        other => panic!("expected a memory request, got {other:?}"),
    }
}

fn as_completion(packet: &Packet) -> Completion {
    match packet.header.body {
        Body::Completion(c) => c,
        other => panic!("expected a completion, got {other:?}"),
    }
}

fn as_message(packet: &Packet) -> Message {
    match packet.header.body {
        Body::Message(m) => m,
        other => panic!("expected a message, got {other:?}"),
    }
}

#[test]
fn host_write_into_a_bar_window_reaches_the_endpoint_in_fabric_terms() {
    let mut switch = fabric();
    let payload = [0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4];
    let out = send(
        &mut switch,
        HOST0,
        memory(MemoryOp::Write, ROOT_PORT, 7, A_BAR_HOST + 0x100, 2),
        &payload,
    );
    let packet = only(&out, Destination::Port(GPU_A));
    let m = as_memory(packet);
    assert_eq!(m.address, A_BAR_FABRIC + 0x100, "window base + offset");
    assert_eq!(m.requester, PROXY0, "the host's proxy ID stands in for it");
    assert_eq!(
        packet.header.header_dws(),
        4,
        "a fabric address above 4 GiB needs the 4 DW header"
    );
    assert_eq!(packet.payload, payload);
    assert_eq!(
        switch.outstanding(HOST0),
        0,
        "posted writes are not tracked"
    );
}

#[test]
fn host_read_and_its_completion_are_translated_both_ways() {
    let mut switch = fabric();
    let out = send(
        &mut switch,
        HOST0,
        memory(MemoryOp::Read, ROOT_PORT, 0x2a, B_BAR_HOST + 0x40, 2),
        &[],
    );
    let request = as_memory(only(&out, Destination::Port(GPU_B)));
    assert_eq!(
        (request.address, request.requester),
        (B_BAR_FABRIC + 0x40, PROXY0)
    );
    assert_eq!(switch.outstanding(HOST0), 1);

    // GPU B answers the proxy with the fabric tag it was given.
    let reply = completion(B_FABRIC, PROXY0, request.tag, 8, Some(2));
    let out = send(&mut switch, GPU_B, reply, &[9; 8]);
    let c = as_completion(only(&out, Destination::Port(HOST0)));
    assert_eq!(
        c.requester, ROOT_PORT,
        "the host's own requester ID comes back"
    );
    assert_eq!(c.tag, Tag::new(0x2a).expect("10-bit"), "and its own tag");
    assert_eq!(
        c.completer, B_HOST,
        "the completer is the ID the host enumerated"
    );
    assert_eq!(
        switch.outstanding(HOST0),
        0,
        "the completion covered the byte count"
    );
}

#[test]
fn a_read_split_into_two_completions_stays_outstanding_until_the_last() {
    let mut switch = fabric();
    let out = send(
        &mut switch,
        HOST0,
        memory(MemoryOp::Read, ROOT_PORT, 3, A_BAR_HOST, 32),
        &[],
    );
    let tag = as_memory(only(&out, Destination::Port(GPU_A))).tag;
    // §2.3.1.1: 128 bytes as two 64-byte completions, Byte Count 128 then 64.
    send(
        &mut switch,
        GPU_A,
        completion(A_FABRIC, PROXY0, tag, 128, Some(16)),
        &[0; 64],
    );
    assert_eq!(switch.outstanding(HOST0), 1);
    let mut second = completion(A_FABRIC, PROXY0, tag, 64, Some(16));
    if let Body::Completion(c) = &mut second.body {
        c.lower_address = 0x40;
    }
    let out = send(&mut switch, GPU_A, second, &[0; 64]);
    assert_eq!(
        as_completion(only(&out, Destination::Port(HOST0))).tag,
        Tag::new(3).expect("10-bit")
    );
    assert_eq!(switch.outstanding(HOST0), 0);
}

#[test]
fn host_request_outside_every_window_is_answered_with_unsupported_request() {
    let mut switch = fabric();
    // 4 DW read of 16 bytes at an address with no window.
    let out = send(
        &mut switch,
        HOST0,
        memory(MemoryOp::Read, ROOT_PORT, 0x11, 0xa000_0000, 4),
        &[],
    );
    let c = refused_with_unsupported_request(&out, DropReason::NoWindow, HOST0);
    assert_eq!(
        (c.requester, c.tag),
        (ROOT_PORT, Tag::new(0x11).expect("10-bit"))
    );
    assert_eq!(c.completer, VUSP0);
    assert_eq!(c.byte_count, 16, "§2.3.1.1: all 16 bytes requested remain");
    assert_eq!(c.data_dw, None);
    assert_eq!(
        switch
            .counters(HOST0)
            .expect("port")
            .drops_for(DropReason::NoWindow),
        1
    );
}

#[test]
fn a_posted_write_outside_every_window_is_dropped_silently() {
    let mut switch = fabric();
    let out = send(
        &mut switch,
        HOST0,
        memory(MemoryOp::Write, ROOT_PORT, 0, 0xa000_0000, 1),
        &[0; 4],
    );
    assert_eq!(out.dropped, Some(DropReason::NoWindow));
    assert!(
        out.deliveries.is_empty(),
        "§2.3.1: a posted request gets no completion"
    );
}

#[test]
fn a_host_cannot_reach_an_endpoint_bound_to_another_host() {
    let mut switch = fabric();
    // Host 1 has no windows: neither its own view of A's BAR nor A's fabric address gets through.
    for address in [A_BAR_HOST, A_BAR_FABRIC] {
        let out = send(
            &mut switch,
            HOST1,
            memory(MemoryOp::Read, ROOT_PORT, 1, address, 1),
            &[],
        );
        refused_with_unsupported_request(&out, DropReason::NoWindow, HOST1);
    }
}

#[test]
fn window_permissions_are_enforced() {
    let mut switch = fabric();
    let mut tables = PortTables {
        role: PortRole::Host {
            host: HostIndex(0),
            proxy_id: PROXY0,
        },
        windows: host0_windows(),
        completer_id: VUSP0,
        ..PortTables::default()
    };
    tables.windows[0].permissions = Permissions {
        read: true,
        write: false,
    };
    switch.set_port(HOST0, tables).expect("within capacity");
    let out = send(
        &mut switch,
        HOST0,
        memory(MemoryOp::Write, ROOT_PORT, 0, A_BAR_HOST, 1),
        &[0; 4],
    );
    assert_eq!(out.dropped, Some(DropReason::Forbidden));
    let out = send(
        &mut switch,
        HOST0,
        memory(MemoryOp::Read, ROOT_PORT, 0, A_BAR_HOST, 1),
        &[],
    );
    assert_eq!(out.dropped, None);
}

#[test]
fn a_request_straddling_the_end_of_a_window_is_refused() {
    let mut switch = fabric_with_first_window(0, 0x800);
    let out = send(
        &mut switch,
        HOST0,
        memory(MemoryOp::Read, ROOT_PORT, 0, A_BAR_HOST + 0x7fc, 2),
        &[],
    );
    assert_eq!(out.dropped, Some(DropReason::NoWindow));
}

/// Host 0's port with its first window moved in the fabric by `shift` bytes and sized `size`.
fn fabric_with_first_window(shift: u64, size: u64) -> Switch {
    let mut switch = fabric();
    let mut windows = host0_windows();
    windows[0].fabric_base += shift;
    windows[0].size = size;
    let role = PortRole::Host {
        host: HostIndex(0),
        proxy_id: PROXY0,
    };
    switch
        .set_port(
            HOST0,
            PortTables {
                role,
                windows,
                completer_id: VUSP0,
                ..PortTables::default()
            },
        )
        .expect("within capacity");
    switch
}

#[test]
fn a_window_that_would_deform_a_request_matches_nothing() {
    // §2.2.7.1: an AtomicOp's address is naturally aligned to its operand,
    // and no memory request crosses a 4 KiB boundary. Moved by 8 bytes, a
    // large window would misalign an aligned 16-byte CAS; moved by 16, it
    // would push a read of a page's last 16 bytes into the next page. So
    // the window is not used: each is refused as if no window were there.
    let cases = [
        (8, MemoryOp::CompareAndSwap, 0x10, 8, vec![0; 32]),
        (16, MemoryOp::Read, 0xff0, 4, vec![]),
    ];
    for (shift, op, offset, length_dw, payload) in cases {
        let mut switch = fabric_with_first_window(shift, BAR_SIZE);
        let request = memory(op, ROOT_PORT, 3, A_BAR_HOST + offset, length_dw);
        let out = send(&mut switch, HOST0, request, &payload);
        refused_with_unsupported_request(&out, DropReason::NoWindow, HOST0);
    }
}

#[test]
fn a_small_window_inside_one_fabric_page_may_move_by_whole_operands() {
    // A 256-byte window at the start of a host page and at 0x200 of a
    // fabric page: every request inside it stays inside the fabric page
    // and keeps its 16-byte alignment, so the window is used.
    let mut switch = fabric_with_first_window(0x200, 0x100);
    let out = send(
        &mut switch,
        HOST0,
        memory(MemoryOp::FetchAdd, ROOT_PORT, 5, A_BAR_HOST + 0xf8, 2),
        &[0; 8],
    );
    let request = as_memory(only(&out, Destination::Port(GPU_A)));
    assert_eq!(request.address, A_BAR_FABRIC + 0x2f8);
}

#[test]
fn endpoint_dma_goes_to_its_owner_host_with_the_host_view_of_its_id() {
    let mut switch = fabric();
    let out = send(
        &mut switch,
        GPU_A,
        memory(MemoryOp::Write, A_FABRIC, 0, 0x1234_0000, 1),
        &[1, 2, 3, 4],
    );
    let m = as_memory(only(&out, Destination::Port(HOST0)));
    assert_eq!(
        m.address, 0x1234_0000,
        "the aperture is undone at host egress"
    );
    assert_eq!(
        m.requester, A_HOST,
        "the host sees the ID it enumerated (its IOMMU depends on it)"
    );
}

#[test]
fn endpoint_read_of_host_memory_is_completed_back_in_fabric_terms() {
    let mut switch = fabric();
    let out = send(
        &mut switch,
        GPU_A,
        memory(MemoryOp::Read, A_FABRIC, 5, 0x8000, 1),
        &[],
    );
    assert_eq!(
        as_memory(only(&out, Destination::Port(HOST0))).requester,
        A_HOST
    );
    // The host's root complex completes to the ID it saw.
    let out = send(
        &mut switch,
        HOST0,
        completion(ROOT_PORT, A_HOST, Tag::new(5).expect("10-bit"), 4, Some(1)),
        &[7; 4],
    );
    let c = as_completion(only(&out, Destination::Port(GPU_A)));
    assert_eq!(c.requester, A_FABRIC);
    assert_eq!(c.completer, PROXY0);
    assert_eq!(
        c.tag,
        Tag::new(5).expect("10-bit"),
        "endpoint tags pass through untouched"
    );
}

#[test]
fn peer_to_peer_stays_inside_the_fabric() {
    let mut switch = fabric();
    // GPU A writes into GPU B's BAR as host 0 assigned it.
    let out = send(
        &mut switch,
        GPU_A,
        memory(MemoryOp::Write, A_FABRIC, 0, B_BAR_HOST + 0x80, 1),
        &[0; 4],
    );
    let m = as_memory(only(&out, Destination::Port(GPU_B)));
    assert_eq!(m.address, B_BAR_FABRIC + 0x80);
    assert_eq!(m.requester, A_FABRIC);
}

#[test]
fn acs_p2p_request_redirect_sends_peer_requests_up_to_the_host() {
    let mut switch = fabric();
    let owner0 = Some(Owner {
        host: HostIndex(0),
        proxy_id: PROXY0,
    });
    switch
        .set_port(
            GPU_A,
            PortTables {
                role: PortRole::Endpoint {
                    owner: owner0,
                    buses: (2, 2),
                },
                windows: host0_windows(),
                p2p_request_redirect: true,
                ..PortTables::default()
            },
        )
        .expect("within capacity");
    let out = send(
        &mut switch,
        GPU_A,
        memory(MemoryOp::Write, A_FABRIC, 0, B_BAR_HOST + 0x80, 1),
        &[0; 4],
    );
    let m = as_memory(only(&out, Destination::Port(HOST0)));
    assert_eq!(
        m.address,
        B_BAR_HOST + 0x80,
        "the host sees the peer address it assigned"
    );
}

#[test]
fn a_spoofed_requester_id_is_refused() {
    let mut switch = fabric();
    // GPU A's port owns bus 2 only; a read claiming GPU B's ID is refused and answered.
    let out = send(
        &mut switch,
        GPU_A,
        memory(MemoryOp::Read, B_FABRIC, 9, 0x8000, 1),
        &[],
    );
    let c = refused_with_unsupported_request(&out, DropReason::SpoofedRequester, GPU_A);
    assert_eq!((c.requester, c.completer), (B_FABRIC, SWITCH_FABRIC));
}

#[test]
fn an_unbound_endpoint_reaches_no_host() {
    let mut switch = fabric();
    switch
        .set_port(
            GPU_A,
            PortTables {
                role: PortRole::Endpoint {
                    owner: None,
                    buses: (2, 2),
                },
                ..PortTables::default()
            },
        )
        .expect("within capacity");
    let out = send(
        &mut switch,
        GPU_A,
        memory(MemoryOp::Write, A_FABRIC, 0, 0x1000, 1),
        &[0; 4],
    );
    assert_eq!(out.dropped, Some(DropReason::Unbound));
    assert!(out.deliveries.is_empty());
}

#[test]
fn intx_is_swizzled_and_collapsed_per_pin() {
    let mut switch = fabric();
    let assert_a = |from| {
        message(
            from,
            MessageCode::AssertIntx(IntxPin::A),
            MessageRouting::Local,
        )
    };
    let deassert_a = |from| {
        message(
            from,
            MessageCode::DeassertIntx(IntxPin::A),
            MessageRouting::Local,
        )
    };
    // Both GPUs sit in slots with device number 1: INTA becomes INTB (§2.2.8.1).
    let out = send(&mut switch, GPU_A, assert_a(A_FABRIC), &[]);
    let m = as_message(only(&out, Destination::Port(HOST0)));
    assert_eq!(m.code, MessageCode::AssertIntx(IntxPin::B));
    assert_eq!(
        m.requester, VUSP0,
        "the virtual switch's upstream port sends it"
    );
    assert_eq!(m.routing, MessageRouting::Local);
    // B asserting the same wire changes nothing the host can see.
    assert!(send(&mut switch, GPU_B, assert_a(B_FABRIC), &[])
        .deliveries
        .is_empty());
    assert!(send(&mut switch, GPU_A, deassert_a(A_FABRIC), &[])
        .deliveries
        .is_empty());
    let out = send(&mut switch, GPU_B, deassert_a(B_FABRIC), &[]);
    assert_eq!(
        as_message(only(&out, Destination::Port(HOST0))).code,
        MessageCode::DeassertIntx(IntxPin::B)
    );
}

#[test]
fn error_messages_go_to_the_owner_host_and_the_event_log() {
    let mut switch = fabric();
    let out = send(
        &mut switch,
        GPU_A,
        message(
            A_FABRIC,
            MessageCode::ErrFatal,
            MessageRouting::ToRootComplex,
        ),
        &[],
    );
    assert_eq!(out.deliveries.len(), 2, "{out:#?}");
    let to_host = out
        .deliveries
        .iter()
        .find(|d| d.to == Destination::Port(HOST0))
        .expect("sent to the host");
    let m = as_message(&to_host.packet);
    assert_eq!(
        (m.code, m.routing, m.requester),
        (MessageCode::ErrFatal, MessageRouting::ToRootComplex, A_HOST)
    );
    assert!(out.deliveries.iter().any(|d| d.to == Destination::Cpu));
}

#[test]
fn a_message_rewritten_for_the_owner_loses_its_digest() {
    // §2.7.1: the ECRC covers the header, whose routing and target the
    // endpoint ingress rewrites; weft does not regenerate the digest.
    let mut switch = fabric();
    let mut packet = Packet::new(
        message(A_FABRIC, MessageCode::ErrCor, MessageRouting::ToRootComplex),
        Vec::new(),
    );
    packet.digest = Some(0x1234_5678);
    let out = switch
        .ingress(GPU_A, &packet.to_bytes().expect("a valid TLP"))
        .expect("port exists");
    let to_cpu = out
        .deliveries
        .iter()
        .find(|d| d.to == Destination::Cpu)
        .expect("errors go to the event log");
    assert_eq!(as_message(&to_cpu.packet).routing, MessageRouting::ById);
    assert_eq!(to_cpu.packet.digest, None);
    assert!(!to_cpu.packet.header.digest_present);
}

#[test]
fn host_configuration_requests_go_to_the_mailbox() {
    let mut switch = fabric();
    let config = Header {
        digest_present: false,
        poisoned: false,
        body: Body::Config(ConfigRequest {
            direction: Direction::Read,
            config_type: ConfigType::Type0,
            requester: ROOT_PORT,
            tag: Tag::new(1).expect("10-bit"),
            target: Bdf::new(1, 0, 0),
            register_number: 0,
            extended_register_number: 0,
            first_be: 0xf,
        }),
    };
    let out = send(&mut switch, HOST0, config, &[]);
    let packet = only(&out, Destination::Cpu);
    assert_eq!(
        packet.header, config,
        "the firmware sees the request as the host sent it"
    );
    assert_eq!(out.deliveries[0].from, HOST0);
}

#[test]
fn io_requests_are_not_carried() {
    let mut switch = fabric();
    let io = Header {
        digest_present: false,
        poisoned: false,
        body: Body::Io(IoRequest {
            direction: Direction::Read,
            requester: ROOT_PORT,
            tag: Tag::new(4).expect("10-bit"),
            address: 0xcf8,
            first_be: 0xf,
        }),
    };
    let out = send(&mut switch, HOST0, io, &[]);
    let c = refused_with_unsupported_request(&out, DropReason::Unsupported, HOST0);
    assert_eq!(c.byte_count, 4, "§2.2.9: I/O completions count 4 bytes");
}

#[test]
fn a_request_that_never_completes_is_completed_by_the_switch() {
    let mut switch = fabric();
    send(
        &mut switch,
        HOST0,
        memory(MemoryOp::Read, ROOT_PORT, 0x33, A_BAR_HOST, 1),
        &[],
    );
    assert!(switch
        .advance_to(DEFAULT_COMPLETION_TIMEOUT_NS - 1)
        .is_empty());
    let timed_out = switch.advance_to(DEFAULT_COMPLETION_TIMEOUT_NS);
    assert_eq!(timed_out.len(), 1);
    let c = as_completion(&timed_out[0].packet);
    assert_eq!(
        (c.status, c.requester, c.tag),
        (
            CompletionStatus::CompleterAbort,
            ROOT_PORT,
            Tag::new(0x33).expect("10-bit")
        )
    );
    assert_eq!(switch.outstanding(HOST0), 0);
}

#[test]
fn the_next_timeout_is_the_oldest_request_in_flight_plus_the_completion_timeout() {
    // §2.8: each request times out its timeout after it was issued; the
    // first to time out is the oldest still waiting.
    const TIMEOUT_NS: u64 = 10_000_000;
    let mut switch = fabric();
    switch.set_completion_timeout(TIMEOUT_NS);
    assert_eq!(switch.next_timeout_ns(), None, "nothing in flight");
    switch.advance_to(1_000);
    let first = send(
        &mut switch,
        HOST0,
        memory(MemoryOp::Read, ROOT_PORT, 1, A_BAR_HOST, 1),
        &[],
    );
    switch.advance_to(3_000);
    send(
        &mut switch,
        HOST0,
        memory(MemoryOp::Read, ROOT_PORT, 2, B_BAR_HOST, 1),
        &[],
    );
    assert_eq!(switch.next_timeout_ns(), Some(1_000 + TIMEOUT_NS));

    // The first read completes: the second is the next to time out.
    let tag = as_memory(only(&first, Destination::Port(GPU_A))).tag;
    send(
        &mut switch,
        GPU_A,
        completion(A_FABRIC, PROXY0, tag, 4, Some(1)),
        &[0; 4],
    );
    assert_eq!(switch.next_timeout_ns(), Some(3_000 + TIMEOUT_NS));

    // A shorter timeout brings it forward, and at that time it is completed.
    switch.set_completion_timeout(TIMEOUT_NS / 2);
    let due = 3_000 + TIMEOUT_NS / 2;
    assert_eq!(switch.next_timeout_ns(), Some(due));
    assert!(switch.advance_to(due - 1).is_empty());
    let timed_out = switch.advance_to(due);
    assert_eq!(timed_out.len(), 1);
    let c = as_completion(&timed_out[0].packet);
    assert_eq!(
        (c.status, c.tag),
        (
            CompletionStatus::CompleterAbort,
            Tag::new(2).expect("10-bit")
        )
    );
    assert_eq!(switch.next_timeout_ns(), None, "nothing left in flight");
}

#[test]
fn a_late_completion_is_dropped() {
    let mut switch = fabric();
    let out = send(
        &mut switch,
        HOST0,
        memory(MemoryOp::Read, ROOT_PORT, 1, A_BAR_HOST, 1),
        &[],
    );
    let tag = as_memory(only(&out, Destination::Port(GPU_A))).tag;
    switch.advance_to(DEFAULT_COMPLETION_TIMEOUT_NS);
    let out = send(
        &mut switch,
        GPU_A,
        completion(A_FABRIC, PROXY0, tag, 4, Some(1)),
        &[0; 4],
    );
    assert_eq!(out.dropped, Some(DropReason::UnexpectedCompletion));
    assert!(out.deliveries.is_empty());
}

#[test]
fn requests_to_a_removed_endpoint_are_completed_with_unsupported_request() {
    let mut switch = fabric();
    send(
        &mut switch,
        HOST0,
        memory(MemoryOp::Read, ROOT_PORT, 1, A_BAR_HOST, 1),
        &[],
    );
    send(
        &mut switch,
        HOST0,
        memory(MemoryOp::Read, ROOT_PORT, 2, B_BAR_HOST, 1),
        &[],
    );
    let abandoned = switch.abandon_requests_to(GPU_A);
    assert_eq!(abandoned.len(), 1);
    let c = as_completion(&abandoned[0].packet);
    assert_eq!(
        (c.status, c.tag),
        (
            CompletionStatus::UnsupportedRequest,
            Tag::new(1).expect("10-bit")
        )
    );
    assert_eq!(
        switch.outstanding(HOST0),
        1,
        "the request to GPU B is still in flight"
    );
}

#[test]
fn a_full_outstanding_table_pushes_back_instead_of_dropping() {
    let mut switch = fabric();
    let read = wire(memory(MemoryOp::Read, ROOT_PORT, 0, A_BAR_HOST, 1), &[]);
    for _ in 0..weft_regs::capacity::OUTSTANDING_PER_HOST {
        switch.ingress(HOST0, &read).expect("a tag is free");
    }
    assert_eq!(
        switch.ingress(HOST0, &read),
        Err(IngressError::Backpressure(HOST0))
    );
    assert_eq!(
        switch.counters(HOST0).expect("port").ingress.non_posted,
        1024,
        "the refused TLP is not counted"
    );
}

#[test]
fn malformed_tlps_are_dropped_and_counted() {
    let mut switch = fabric();
    let mut bytes = wire(
        memory(MemoryOp::Write, ROOT_PORT, 0, A_BAR_HOST, 2),
        &[0; 8],
    );
    bytes.truncate(bytes.len() - 4);
    let out = switch.ingress(HOST0, &bytes).expect("port exists");
    assert_eq!(out.dropped, Some(DropReason::Malformed));
    assert!(out.deliveries.is_empty());
    assert_eq!(
        switch
            .counters(HOST0)
            .expect("port")
            .drops_for(DropReason::Malformed),
        1
    );
}

#[test]
fn a_route_back_out_of_the_ingress_port_is_refused() {
    let mut switch = fabric();
    // GPU A reading its own BAR through the fabric address would loop back out its own port.
    let out = send(
        &mut switch,
        GPU_A,
        memory(MemoryOp::Read, A_FABRIC, 1, A_BAR_HOST, 1),
        &[],
    );
    refused_with_unsupported_request(&out, DropReason::RoutesToIngress, GPU_A);
}

#[test]
fn a_host_read_refused_after_routing_leaves_its_tag_to_the_next() {
    let mut switch = fabric();
    // GPU A's BAR routed back out of host 0's own port.
    let routes = RouteTables {
        addresses: vec![
            AddressRoute {
                base: A_BAR_FABRIC,
                size: BAR_SIZE,
                to: Destination::Port(HOST0),
            },
            AddressRoute {
                base: B_BAR_FABRIC,
                size: BAR_SIZE,
                to: Destination::Port(GPU_B),
            },
        ],
        ..RouteTables::default()
    };
    switch.set_routes(routes).expect("within capacity");
    let first = send(
        &mut switch,
        HOST0,
        memory(MemoryOp::Read, ROOT_PORT, 1, B_BAR_HOST, 1),
        &[],
    );
    let first_tag = as_memory(only(&first, Destination::Port(GPU_B))).tag;
    let refused = send(
        &mut switch,
        HOST0,
        memory(MemoryOp::Read, ROOT_PORT, 2, A_BAR_HOST, 1),
        &[],
    );
    refused_with_unsupported_request(&refused, DropReason::RoutesToIngress, HOST0);
    assert_eq!(
        switch.outstanding(HOST0),
        1,
        "the refused read holds no tag"
    );
    let next = send(
        &mut switch,
        HOST0,
        memory(MemoryOp::Read, ROOT_PORT, 3, B_BAR_HOST, 1),
        &[],
    );
    assert_eq!(
        as_memory(only(&next, Destination::Port(GPU_B))).tag.get(),
        first_tag.get() + 1,
        "the next read gets the tag the refused one was given and gave back"
    );
}

#[test]
fn a_tlp_longer_than_a_switching_slot_is_malformed() {
    // §2.2.2: a payload over Max_Payload_Size is a Malformed TLP; the
    // switch's slot bounds the Max_Payload_Size it takes.
    let mut switch = fabric();
    switch.set_slot_dw(8);
    let write = |length_dw: u16| memory(MemoryOp::Write, ROOT_PORT, 0, B_BAR_HOST, length_dw);
    let fits = send(&mut switch, HOST0, write(8), &[0; 32]);
    assert_eq!(fits.dropped, None);
    let over = send(&mut switch, HOST0, write(9), &[0; 36]);
    assert_eq!(over.dropped, Some(DropReason::Malformed));
    assert!(over.deliveries.is_empty());
}

/// [`fabric`] with GPU B moved below GPU A's port, behind one conventional
/// switch whose downstream ports redirect peer traffic up to that port (ACS
/// P2P Request and Completion Redirect, PCIe Base 6.0 §6.12.1.1). GPU A is
/// bound to host 0, GPU B to `b_owner`; each host's windows of its GPUs are
/// the port's peer windows, tagged with the host they serve, host 1 having
/// put GPU B's BAR at the same address host 0 would have.
fn conventional_switch(return_to_ingress: bool, b_owner: HostIndex) -> Switch {
    let mut switch = fabric();
    let owner = |host: HostIndex| Owner {
        host,
        proxy_id: [PROXY0, PROXY1][usize::from(host.0)],
    };
    let bound = |function, host| FunctionOwner {
        function,
        owner: owner(host),
        p2p_request_redirect: false,
        intx_swizzle: 0,
    };
    let [a_window, b_window] = [host0_windows()[0], host0_windows()[1]];
    let (windows, window_owners) = if b_owner == HostIndex(0) {
        (vec![a_window, b_window], vec![None, None])
    } else {
        (
            vec![a_window, b_window],
            vec![Some(HostIndex(0)), Some(b_owner)],
        )
    };
    let port_owner = (b_owner == HostIndex(0)).then(|| owner(HostIndex(0)));
    let function_owners = if port_owner.is_some() {
        Vec::new()
    } else {
        vec![bound(A_FABRIC, HostIndex(0)), bound(B_FABRIC, b_owner)]
    };
    switch
        .set_port(
            GPU_A,
            PortTables {
                role: PortRole::Endpoint {
                    owner: port_owner,
                    buses: (2, 3),
                },
                windows,
                window_owners,
                function_owners,
                completer_id: SWITCH_FABRIC,
                return_to_ingress,
                ..PortTables::default()
            },
        )
        .expect("within capacity");
    switch
        .set_port(GPU_B, PortTables::default())
        .expect("within capacity");
    let mut routes = switch.routes().clone();
    for route in &mut routes.addresses {
        if route.to == Destination::Port(GPU_B) {
            route.to = Destination::Port(GPU_A);
        }
    }
    routes.buses[3] = Some(Destination::Port(GPU_A));
    switch.set_routes(routes).expect("within capacity");
    switch
}

#[test]
fn a_peer_write_below_a_conventional_switch_goes_back_down_its_port() {
    let mut switch = conventional_switch(true, HostIndex(0));
    // GPU A writes into GPU B's BAR as host 0 assigned it; the conventional
    // switch redirected it up, the port translates it and returns it.
    let out = send(
        &mut switch,
        GPU_A,
        memory(MemoryOp::Write, A_FABRIC, 0, B_BAR_HOST + 0x80, 1),
        &[0; 4],
    );
    assert_eq!(out.dropped, None);
    let m = as_memory(only(&out, Destination::Port(GPU_A)));
    assert_eq!(
        m.address,
        B_BAR_FABRIC + 0x80,
        "in fabric terms, as B decodes"
    );
    assert_eq!(m.requester, A_FABRIC);
    let counters = switch.counters(GPU_A).expect("port");
    // 3 DW header + 4 bytes in; 4 DW header + 4 bytes out, counted as egress.
    assert_eq!((counters.ingress.posted, counters.ingress.bytes), (1, 16));
    assert_eq!((counters.egress.posted, counters.egress.bytes), (1, 20));
    assert_eq!(counters.drops_for(DropReason::RoutesToIngress), 0);
}

#[test]
fn a_peer_read_and_its_completion_below_a_conventional_switch_go_back_down() {
    let mut switch = conventional_switch(true, HostIndex(0));
    let out = send(
        &mut switch,
        GPU_A,
        memory(MemoryOp::Read, A_FABRIC, 7, B_BAR_HOST + 0x100, 2),
        &[],
    );
    let read = as_memory(only(&out, Destination::Port(GPU_A)));
    assert_eq!(read.address, B_BAR_FABRIC + 0x100);
    assert_eq!(
        (read.requester, read.tag),
        (A_FABRIC, Tag::new(7).expect("fits"))
    );
    // GPU B answers; P2P Completion Redirect sends the completion up too.
    let data = [0x5a; 8];
    let out = send(
        &mut switch,
        GPU_A,
        completion(B_FABRIC, A_FABRIC, read.tag, 8, Some(2)),
        &data,
    );
    assert_eq!(out.dropped, None);
    let packet = only(&out, Destination::Port(GPU_A));
    let c = as_completion(packet);
    assert_eq!(
        (c.completer, c.requester, c.tag),
        (B_FABRIC, A_FABRIC, read.tag)
    );
    assert_eq!(packet.payload, data);
    let counters = switch.counters(GPU_A).expect("port");
    assert_eq!(
        (counters.egress.non_posted, counters.egress.completions),
        (1, 1)
    );
    assert_eq!(switch.outstanding(HOST0), 0, "no host request is involved");
}

#[test]
fn without_return_to_ingress_a_peer_request_below_one_port_is_refused() {
    let mut switch = conventional_switch(false, HostIndex(0));
    let out = send(
        &mut switch,
        GPU_A,
        memory(MemoryOp::Read, A_FABRIC, 7, B_BAR_HOST + 0x100, 2),
        &[],
    );
    refused_with_unsupported_request(&out, DropReason::RoutesToIngress, GPU_A);
    let out = send(
        &mut switch,
        GPU_A,
        completion(B_FABRIC, A_FABRIC, Tag::new(7).expect("fits"), 8, Some(2)),
        &[0; 8],
    );
    assert_eq!(out.dropped, Some(DropReason::RoutesToIngress));
    assert!(out.deliveries.is_empty(), "a completion is not answered");
}

#[test]
fn return_to_ingress_keeps_functions_of_different_hosts_apart() {
    let mut switch = conventional_switch(true, HostIndex(1));
    // Host 0 knows no GPU B: A's request at the address host 1 gave B's
    // BAR is DMA into host 0's memory, never a peer request.
    let out = send(
        &mut switch,
        GPU_A,
        memory(MemoryOp::Read, A_FABRIC, 7, B_BAR_HOST + 0x100, 2),
        &[],
    );
    let read = as_memory(only(&out, Destination::Port(HOST0)));
    assert_eq!(read.address, B_BAR_HOST + 0x100, "host 0's own address");
    // A completion from B (host 1) to A (host 0) answers nothing A asked of
    // B, so it is not sent back down.
    let out = send(
        &mut switch,
        GPU_A,
        completion(B_FABRIC, A_FABRIC, Tag::new(7).expect("fits"), 8, Some(2)),
        &[0; 8],
    );
    assert_eq!(out.dropped, Some(DropReason::RoutesToIngress));
    assert!(out.deliveries.is_empty());
    // Each GPU still reaches its own BAR through its own host's window.
    let out = send(
        &mut switch,
        GPU_A,
        memory(MemoryOp::Write, A_FABRIC, 0, A_BAR_HOST, 1),
        &[0; 4],
    );
    assert_eq!(
        as_memory(only(&out, Destination::Port(GPU_A))).address,
        A_BAR_FABRIC
    );
}

#[test]
fn host_and_fabric_ports_never_return_to_ingress() {
    const FABRIC: PortIndex = PortIndex(4);
    let mut switch = fabric_with_ports(5);
    switch
        .set_port(
            FABRIC,
            PortTables {
                role: PortRole::Fabric,
                return_to_ingress: true,
                ..PortTables::default()
            },
        )
        .expect("within capacity");
    let mut host0 = switch.port_tables(HOST0).expect("port").clone();
    host0.return_to_ingress = true;
    // A host window leading into the host's own aperture.
    host0.windows.push(Window {
        base: 0xa000_0000,
        size: 0x1000,
        fabric_base: aperture_base(HostIndex(0)),
        permissions: Permissions::READ_WRITE,
    });
    switch.set_port(HOST0, host0).expect("within capacity");
    let out = send(
        &mut switch,
        HOST0,
        memory(MemoryOp::Read, ROOT_PORT, 3, 0xa000_0000, 1),
        &[],
    );
    refused_with_unsupported_request(&out, DropReason::RoutesToIngress, HOST0);
    assert_eq!(
        switch.outstanding(HOST0),
        0,
        "the refused read holds no tag"
    );
    let mut routes = switch.routes().clone();
    routes.addresses.insert(
        0,
        AddressRoute {
            base: 0x1_0000_0000,
            size: 0x1000,
            to: Destination::Port(FABRIC),
        },
    );
    switch.set_routes(routes).expect("within capacity");
    let out = send(
        &mut switch,
        FABRIC,
        memory(MemoryOp::Read, PROXY1, 3, 0x1_0000_0000, 1),
        &[],
    );
    assert_eq!(out.dropped, Some(DropReason::RoutesToIngress));
}

#[test]
fn counters_count_what_passes() {
    let mut switch = fabric();
    send(
        &mut switch,
        HOST0,
        memory(MemoryOp::Write, ROOT_PORT, 0, A_BAR_HOST, 2),
        &[0; 8],
    );
    let host = switch.counters(HOST0).expect("port");
    // 3 DW header + 8 bytes in; 4 DW header + 8 bytes out.
    assert_eq!((host.ingress.posted, host.ingress.bytes), (1, 20));
    let gpu = switch.counters(GPU_A).expect("port");
    assert_eq!((gpu.egress.posted, gpu.egress.bytes), (1, 24));
}

#[test]
fn atomic_ops_are_tracked_and_refused_like_reads() {
    let mut switch = fabric();
    // A 64-bit CompareAndSwap: Length 4 DW carries compare and swap values
    // for one 8-byte location (§2.2.7.1, Table 2-15).
    let mut cas = memory(
        MemoryOp::CompareAndSwap,
        ROOT_PORT,
        0x44,
        A_BAR_HOST + 0x10,
        4,
    );
    if let Body::Memory(m) = &mut cas.body {
        (m.first_be, m.last_be) = (0, 0);
    }
    let out = send(&mut switch, HOST0, cas, &[0; 16]);
    let m = as_memory(only(&out, Destination::Port(GPU_A)));
    assert_eq!((m.address, m.requester), (A_BAR_FABRIC + 0x10, PROXY0));
    assert_eq!(switch.outstanding(HOST0), 1, "an AtomicOp is non-posted");
    // Outside every window it is answered with UR whose Byte Count is the
    // 8-byte operand size (§2.2.9.1), not the 16 bytes of payload.
    if let Body::Memory(m) = &mut cas.body {
        m.address = 0xa000_0010;
    }
    let out = send(&mut switch, HOST0, cas, &[0; 16]);
    let c = refused_with_unsupported_request(&out, DropReason::NoWindow, HOST0);
    assert_eq!((c.byte_count, c.lower_address), (8, 0));
}

// ---------------------------------------------------------------- one drive, two hosts
//
// An NVMe drive on port 4 whose VF 1 is bound to host 0 and VF 2 to host 1
// (§9.3.3.9-10: VF n = PF RID + First VF Offset 0x80 + (n - 1) × VF Stride
// 0x40), and a third GPU on port 5 bound to host 1. The port has no owner
// of its own; each VF has a function owner entry. Each host gave its VF
// the same BAR address, and host 1 put GPU C at the address where host 0
// has GPU A, so only the owner decides where a request goes.

const NVME: PortIndex = PortIndex(4);
const GPU_C: PortIndex = PortIndex(5);
const NVME_PF: Bdf = Bdf::new(4, 0, 0);
const VF_A: Bdf = Bdf(0x0480);
const VF_B: Bdf = Bdf(0x04c0);
/// The IDs host 0 gave VF A, and host 1 gave VF B and GPU C.
const VF_A_HOST: Bdf = Bdf::new(0x15, 0, 0);
const VF_B_HOST: Bdf = Bdf::new(0x23, 0, 0);
const C_FABRIC: Bdf = Bdf::new(5, 0, 0);
const C_HOST: Bdf = Bdf::new(0x24, 0, 0);
/// GPU C's BAR0 in the fabric; host 1 assigned it at `A_BAR_HOST`.
const C_BAR_FABRIC: u64 = 0x40_2000_0000;
/// The VFs' BAR0, 16 KiB each, in the fabric; each host assigned its VF's at `VF_BAR_HOST`.
const VF_A_BAR_FABRIC: u64 = 0x40_3000_0000;
const VF_B_BAR_FABRIC: u64 = 0x40_3000_4000;
const VF_BAR_HOST: u64 = 0x9200_0000;
const VF_BAR_SIZE: u64 = 16 << 10;
/// Host 1's virtual upstream port.
const VUSP1: Bdf = Bdf::new(0x20, 0, 0);

fn window(base: u64, size: u64, fabric_base: u64) -> Window {
    Window {
        base,
        size,
        fabric_base,
        permissions: Permissions::READ_WRITE,
    }
}

fn owner(host: u16) -> Owner {
    Owner {
        host: HostIndex(host),
        proxy_id: [PROXY0, PROXY1][usize::from(host)],
    }
}

/// Function owner entry: `function` bound to `host`'s slot `slot`.
fn function_owner(function: Bdf, host: u16, slot: u8) -> FunctionOwner {
    FunctionOwner {
        function,
        owner: owner(host),
        p2p_request_redirect: false,
        intx_swizzle: slot,
    }
}

/// The fabric of [`fabric`], plus the shared drive and GPU C.
fn shared_drive() -> Switch {
    let mut switch = fabric_with_ports(6);
    let mut host0_all = host0_windows();
    host0_all.push(window(VF_BAR_HOST, VF_BAR_SIZE, VF_A_BAR_FABRIC));
    switch
        .set_port(
            HOST0,
            PortTables {
                role: PortRole::Host {
                    host: HostIndex(0),
                    proxy_id: PROXY0,
                },
                windows: host0_all,
                id_map: vec![
                    IdMapping {
                        fabric: A_FABRIC,
                        host: A_HOST,
                    },
                    IdMapping {
                        fabric: B_FABRIC,
                        host: B_HOST,
                    },
                    IdMapping {
                        fabric: VF_A,
                        host: VF_A_HOST,
                    },
                ],
                completer_id: VUSP0,
                ..PortTables::default()
            },
        )
        .expect("within capacity");
    let gpu_c_window = window(A_BAR_HOST, BAR_SIZE, C_BAR_FABRIC);
    switch
        .set_port(
            HOST1,
            PortTables {
                role: PortRole::Host {
                    host: HostIndex(1),
                    proxy_id: PROXY1,
                },
                windows: vec![
                    gpu_c_window,
                    window(VF_BAR_HOST, VF_BAR_SIZE, VF_B_BAR_FABRIC),
                ],
                id_map: vec![
                    IdMapping {
                        fabric: C_FABRIC,
                        host: C_HOST,
                    },
                    IdMapping {
                        fabric: VF_B,
                        host: VF_B_HOST,
                    },
                ],
                completer_id: VUSP1,
                ..PortTables::default()
            },
        )
        .expect("within capacity");
    switch
        .set_port(
            GPU_C,
            PortTables {
                role: PortRole::Endpoint {
                    owner: Some(owner(1)),
                    buses: (5, 5),
                },
                windows: vec![window(VF_BAR_HOST, VF_BAR_SIZE, VF_B_BAR_FABRIC)],
                completer_id: SWITCH_FABRIC,
                ..PortTables::default()
            },
        )
        .expect("within capacity");
    // The shared port, written entry by entry as the fabric manager writes it.
    let plane: &mut dyn DataPlane = &mut switch;
    plane
        .set_port_role(
            NVME,
            PortRole::Endpoint {
                owner: None,
                buses: (4, 4),
            },
        )
        .expect("port exists");
    plane
        .set_completer_id(NVME, SWITCH_FABRIC)
        .expect("port exists");
    plane
        .set_function_owner(NVME, 0, Some(function_owner(VF_A, 0, 2)))
        .expect("entry exists");
    plane
        .set_function_owner(NVME, 1, Some(function_owner(VF_B, 1, 0)))
        .expect("entry exists");
    let peers = [
        (host0_windows()[0], 0),
        (host0_windows()[1], 0),
        (gpu_c_window, 1),
    ];
    for (index, (peer, host)) in peers.into_iter().enumerate() {
        plane
            .set_peer_window(NVME, index, peer, Some(HostIndex(host)))
            .expect("entry exists");
    }
    let mut routes = switch.routes().clone();
    routes.addresses.insert(
        0,
        AddressRoute {
            base: C_BAR_FABRIC,
            size: BAR_SIZE,
            to: Destination::Port(GPU_C),
        },
    );
    routes.addresses.insert(
        0,
        AddressRoute {
            base: VF_A_BAR_FABRIC,
            size: 2 * VF_BAR_SIZE,
            to: Destination::Port(NVME),
        },
    );
    routes.buses[4] = Some(Destination::Port(NVME));
    routes.buses[5] = Some(Destination::Port(GPU_C));
    switch.set_routes(routes).expect("within capacity");
    switch
}

#[test]
fn each_function_of_a_shared_port_dmas_into_its_own_hosts_aperture() {
    let mut switch = shared_drive();
    for (vf, host_port, host_id) in [(VF_A, HOST0, VF_A_HOST), (VF_B, HOST1, VF_B_HOST)] {
        let out = send(
            &mut switch,
            NVME,
            memory(MemoryOp::Write, vf, 0, 0x1234_0000, 1),
            &[1, 2, 3, 4],
        );
        let m = as_memory(only(&out, Destination::Port(host_port)));
        assert_eq!((m.address, m.requester), (0x1234_0000, host_id));
    }
}

#[test]
fn a_function_of_a_shared_port_reaches_its_own_hosts_peer_windows_only() {
    let mut switch = shared_drive();
    // The same host address: GPU A for host 0's VF, GPU C for host 1's.
    let out = send(
        &mut switch,
        NVME,
        memory(MemoryOp::Write, VF_A, 0, A_BAR_HOST + 0x40, 1),
        &[0; 4],
    );
    assert_eq!(
        as_memory(only(&out, Destination::Port(GPU_A))).address,
        A_BAR_FABRIC + 0x40
    );
    let out = send(
        &mut switch,
        NVME,
        memory(MemoryOp::Write, VF_B, 0, A_BAR_HOST + 0x40, 1),
        &[0; 4],
    );
    assert_eq!(
        as_memory(only(&out, Destination::Port(GPU_C))).address,
        C_BAR_FABRIC + 0x40
    );
    // Host 0's window onto GPU B does not exist for host 1's VF: the
    // address is host 1's own memory.
    let out = send(
        &mut switch,
        NVME,
        memory(MemoryOp::Write, VF_B, 0, B_BAR_HOST + 0x40, 1),
        &[0; 4],
    );
    assert_eq!(
        as_memory(only(&out, Destination::Port(HOST1))).address,
        B_BAR_HOST + 0x40
    );
}

#[test]
fn acs_p2p_request_redirect_is_per_function_on_a_shared_port() {
    let mut switch = shared_drive();
    let redirected = FunctionOwner {
        p2p_request_redirect: true,
        ..function_owner(VF_A, 0, 2)
    };
    DataPlane::set_function_owner(&mut switch, NVME, 0, Some(redirected)).expect("entry exists");
    let peer_write = |vf| memory(MemoryOp::Write, vf, 0, A_BAR_HOST + 0x40, 1);
    let out = send(&mut switch, NVME, peer_write(VF_A), &[0; 4]);
    assert_eq!(
        as_memory(only(&out, Destination::Port(HOST0))).address,
        A_BAR_HOST + 0x40,
        "host 0 set P2P Request Redirect on VF A's slot (§7.7.11.3)"
    );
    let out = send(&mut switch, NVME, peer_write(VF_B), &[0; 4]);
    assert_eq!(
        as_memory(only(&out, Destination::Port(GPU_C))).address,
        C_BAR_FABRIC + 0x40,
        "host 1 did not on VF B's"
    );
}

#[test]
fn messages_from_a_shared_port_go_to_each_functions_owner() {
    let mut switch = shared_drive();
    // VF A sits in host 0's slot 2: INTA becomes INTC (§2.2.8.1); VF B in
    // host 1's slot 0 keeps INTA.
    let assert_a = |from| {
        message(
            from,
            MessageCode::AssertIntx(IntxPin::A),
            MessageRouting::Local,
        )
    };
    let out = send(&mut switch, NVME, assert_a(VF_A), &[]);
    let m = as_message(only(&out, Destination::Port(HOST0)));
    assert_eq!(
        (m.code, m.requester),
        (MessageCode::AssertIntx(IntxPin::C), VUSP0)
    );
    let out = send(&mut switch, NVME, assert_a(VF_B), &[]);
    let m = as_message(only(&out, Destination::Port(HOST1)));
    assert_eq!(
        (m.code, m.requester),
        (MessageCode::AssertIntx(IntxPin::A), VUSP1)
    );
    // An error of VF B goes to host 1 and the event log, never to host 0.
    let out = send(
        &mut switch,
        NVME,
        message(
            VF_B,
            MessageCode::ErrNonFatal,
            MessageRouting::ToRootComplex,
        ),
        &[],
    );
    let destinations: Vec<Destination> = out.deliveries.iter().map(|d| d.to).collect();
    assert_eq!(
        destinations,
        [Destination::Port(HOST1), Destination::Cpu],
        "{out:#?}"
    );
    assert_eq!(as_message(&out.deliveries[0].packet).requester, VF_B_HOST);
}

#[test]
fn a_function_without_an_entry_on_a_shared_port_is_unbound() {
    let mut switch = shared_drive();
    let out = send(
        &mut switch,
        NVME,
        memory(MemoryOp::Write, NVME_PF, 0, 0x1000, 1),
        &[0; 4],
    );
    assert_eq!(out.dropped, Some(DropReason::Unbound));
    assert!(out.deliveries.is_empty());
    let out = send(
        &mut switch,
        NVME,
        memory(MemoryOp::Read, NVME_PF, 3, A_BAR_HOST, 1),
        &[],
    );
    let c = refused_with_unsupported_request(&out, DropReason::Unbound, NVME);
    assert_eq!(c.completer, SWITCH_FABRIC);
    // Its messages go to the fabric manager only.
    let out = send(
        &mut switch,
        NVME,
        message(NVME_PF, MessageCode::ErrCor, MessageRouting::ToRootComplex),
        &[],
    );
    only(&out, Destination::Cpu);
    // Clearing VF B's entry unbinds it alike.
    DataPlane::set_function_owner(&mut switch, NVME, 1, None).expect("entry exists");
    let out = send(
        &mut switch,
        NVME,
        memory(MemoryOp::Write, VF_B, 0, 0x1000, 1),
        &[0; 4],
    );
    assert_eq!(out.dropped, Some(DropReason::Unbound));
}

#[test]
fn a_function_owner_entry_overrides_the_port_owner_and_untagged_windows_serve_the_port_owner() {
    let mut switch = shared_drive();
    let plane: &mut dyn DataPlane = &mut switch;
    plane
        .set_port_role(
            NVME,
            PortRole::Endpoint {
                owner: Some(owner(0)),
                buses: (4, 4),
            },
        )
        .expect("port exists");
    plane
        .set_function_owner(NVME, 0, None)
        .expect("entry exists");
    // Window 0 (onto GPU A) untagged: it serves the port's owner, host 0.
    plane
        .set_window(NVME, 0, host0_windows()[0])
        .expect("entry exists");
    for vf in [VF_A, NVME_PF] {
        let out = send(
            &mut switch,
            NVME,
            memory(MemoryOp::Write, vf, 0, A_BAR_HOST + 0x40, 1),
            &[0; 4],
        );
        assert_eq!(
            as_memory(only(&out, Destination::Port(GPU_A))).address,
            A_BAR_FABRIC + 0x40
        );
    }
    let out = send(
        &mut switch,
        NVME,
        memory(MemoryOp::Write, VF_B, 0, A_BAR_HOST + 0x40, 1),
        &[0; 4],
    );
    assert_eq!(
        as_memory(only(&out, Destination::Port(GPU_C))).address,
        C_BAR_FABRIC + 0x40
    );
}

#[test]
fn a_removed_function_abandons_its_own_hosts_requests_only() {
    let mut switch = shared_drive();
    for (host_port, tag) in [(HOST0, 1), (HOST1, 2)] {
        let out = send(
            &mut switch,
            host_port,
            memory(MemoryOp::Read, ROOT_PORT, tag, VF_BAR_HOST, 1),
            &[],
        );
        only(&out, Destination::Port(NVME));
    }
    let abandoned = switch.abandon_host_requests_to(HOST0, NVME);
    assert_eq!(abandoned.len(), 1);
    assert_eq!(abandoned[0].to, Destination::Port(HOST0));
    let c = as_completion(&abandoned[0].packet);
    assert_eq!(
        (c.status, c.tag, c.completer),
        (
            CompletionStatus::UnsupportedRequest,
            Tag::new(1).expect("10-bit"),
            VUSP0
        )
    );
    assert_eq!(switch.outstanding(HOST0), 0);
    assert_eq!(
        switch.outstanding(HOST1),
        1,
        "host 1's read of its own VF is still in flight"
    );
}
