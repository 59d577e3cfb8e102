//! The largest instance of every variant that can grow still fits one
//! datagram, so a switch never has to answer "too large".

use weft_proto::heapless::{String, Vec};
use weft_proto::*;

fn fits_as_response(name: &str, response: Response) -> usize {
    let mut out = [0u8; MAX_DATAGRAM];
    let sent = Header::request(u32::MAX, SwitchId(u64::MAX), u64::MAX);
    match encode_response(
        &sent.reply(SwitchId(u64::MAX)),
        &response,
        &[],
        &Key::insecure_public(),
        &mut out,
    ) {
        Ok(len) => len,
        Err(e) => panic!("the largest {name} does not fit a datagram: {e}"),
    }
}

fn full_string<const N: usize>() -> String<N> {
    // Two-byte characters, so the string is full to its last byte.
    let mut s = String::new();
    while s.push('é').is_ok() {}
    while s.push('x').is_ok() {}
    s
}

fn full_functions() -> BoundFunctions {
    let mut v = Vec::new();
    while v.push(FabricId(u16::MAX)).is_ok() {}
    v
}

fn largest_error() -> Error {
    // No error's fields take more than the ten bytes of a 64-bit varint.
    Error::WrongSwitch {
        ours: SwitchId(u64::MAX),
    }
}

fn largest_endpoint() -> EndpointInfo {
    let mut bars = Vec::new();
    while bars
        .push(BarInfo {
            index: u8::MAX,
            kind: BarKind::Memory64,
            prefetchable: true,
            size: u64::MAX,
            fabric_address: u64::MAX,
        })
        .is_ok()
    {}
    EndpointInfo {
        fabric_id: FabricId(u16::MAX),
        at: PortRef {
            switch: SwitchId(u64::MAX),
            port: PortIndex(u8::MAX),
        },
        vendor_id: u16::MAX,
        device_id: u16::MAX,
        class_code: ClassCode(u32::MAX),
        bars,
        sriov: Some(SriovInfo {
            total_vfs: u16::MAX,
            num_vfs: u16::MAX,
            first_vf_offset: u16::MAX,
            vf_stride: u16::MAX,
            vf_device_id: u16::MAX,
        }),
        physical_function: Some(FabricId(u16::MAX)),
        owner: Some(Owner {
            host: HostIndex(u8::MAX),
            slot: SlotIndex(u8::MAX),
        }),
    }
}

#[test]
fn a_full_topology_page_of_the_largest_endpoints_fits() {
    let mut items = Vec::new();
    while items
        .push(TopologyItem::Endpoint(largest_endpoint()))
        .is_ok()
    {}
    assert_eq!(items.len(), TOPOLOGY_PAGE_ITEMS);
    let page = TopologyPage {
        generation: Generation(u32::MAX),
        items,
        next: Some(TopologyCursor(u32::MAX)),
    };
    let len = fits_as_response("topology page", Response::Topology(page));
    println!("largest topology page: {len} bytes of {MAX_DATAGRAM}");
}

#[test]
fn a_full_topology_page_of_the_largest_switches_fits() {
    let mut items = Vec::new();
    while items
        .push(TopologyItem::Switch(SwitchInfo {
            id: SwitchId(u64::MAX),
            board: full_string(),
            ports: u8::MAX,
            manager: true,
        }))
        .is_ok()
    {}
    fits_as_response(
        "switch page",
        Response::Topology(TopologyPage {
            generation: Generation(0),
            items,
            next: None,
        }),
    );
}

#[test]
fn a_virtual_switch_with_every_slot_fully_bound_fits() {
    let mut slots = Vec::new();
    let mut i = 0u8;
    while slots
        .push(SlotInfo {
            slot: SlotIndex(i),
            state: SlotState::Unbinding {
                functions: full_functions(),
                mode: UnbindMode::Surprise,
            },
        })
        .is_ok()
    {
        i = i.wrapping_add(1);
    }
    assert_eq!(slots.len(), MAX_SLOTS);
    let info = VirtualSwitchInfo {
        host: HostIndex(u8::MAX),
        upstream: LinkStatus {
            state: LinkState::Up,
            speed: Some(LinkSpeed::Gen6),
            width: u8::MAX,
        },
        generation: Generation(u32::MAX),
        slots,
    };
    let len = fits_as_response("virtual switch", Response::VirtualSwitch(info));
    println!("largest virtual switch: {len} bytes of {MAX_DATAGRAM}");
}

#[test]
fn a_full_event_page_of_the_largest_events_fits() {
    let mut events = Vec::new();
    while events
        .push(Event {
            seq: EventSeq(u64::MAX),
            time_ms: u64::MAX,
            // The largest kind: a 64-bit switch ID and a 32-bit count.
            kind: EventKind::IsolationDrops {
                at: PortRef {
                    switch: SwitchId(u64::MAX),
                    port: PortIndex(u8::MAX),
                },
                check: IsolationCheck::OutsideAperture,
                count: u32::MAX,
            },
        })
        .is_ok()
    {}
    let page = EventPage {
        oldest: EventSeq(u64::MAX),
        events,
        next: EventSeq(u64::MAX),
    };
    let len = fits_as_response("event page", Response::Events(page));
    println!("largest event page: {len} bytes of {MAX_DATAGRAM}");
}

#[test]
fn a_full_counter_list_fits() {
    let mut values = Vec::new();
    while values
        .push(CounterValue {
            kind: CounterKind::LinkDowns,
            value: u64::MAX,
        })
        .is_ok()
    {}
    fits_as_response(
        "counters",
        Response::Counters(PortCounters {
            port: PortIndex(u8::MAX),
            values,
        }),
    );
}

#[test]
fn the_largest_identity_and_status_fit() {
    fits_as_response(
        "identity",
        Response::Identity(Identity {
            switch: SwitchId(u64::MAX),
            firmware: FirmwareVersion {
                major: u16::MAX,
                minor: u16::MAX,
                patch: u16::MAX,
                build: full_string(),
            },
            protocol: u16::MAX,
            oldest_protocol: u16::MAX,
            board: full_string(),
            ports: u8::MAX,
            capabilities: Capabilities(u32::MAX),
        }),
    );
    fits_as_response(
        "firmware status",
        Response::FirmwareStatus(FirmwareStatus {
            state: UpdateState::Failed {
                reason: largest_error(),
            },
            size: u32::MAX,
            received: u32::MAX,
            running: ImageSlot::B,
            next_boot: ImageSlot::B,
        }),
    );
    fits_as_response(
        "operation",
        Response::Operation(OperationReport {
            op: OperationId(u32::MAX),
            state: OperationState::Failed {
                reason: largest_error(),
            },
        }),
    );
}

#[test]
fn the_largest_requests_fit_with_room_for_a_full_chunk() {
    let mut out = [0u8; MAX_DATAGRAM];
    let header = Header::request(u32::MAX, SwitchId(u64::MAX), u64::MAX);
    let key = Key::insecure_public();
    let chunk = [0xffu8; MAX_CHUNK];
    let len = encode_request(
        &header,
        &Request::FirmwareChunk { offset: u32::MAX },
        &chunk,
        &key,
        &mut out,
    )
    .expect("a full chunk fits");
    println!("largest chunk datagram: {len} bytes of {MAX_DATAGRAM}");
    let bind = Request::Bind {
        host: HostIndex(u8::MAX),
        slot: SlotIndex(u8::MAX),
        functions: full_functions(),
        if_generation: Some(Generation(u32::MAX)),
    };
    encode_request(&header, &bind, &[], &key, &mut out).expect("the largest bind fits");
    let prepare = Request::FirmwarePrepare {
        size: u32::MAX,
        digest: Digest([0xff; 32]),
    };
    encode_request(&header, &prepare, &[], &key, &mut out).expect("a prepare fits");
}

#[test]
fn a_message_that_cannot_fit_is_refused_not_truncated() {
    let mut out = [0u8; MAX_DATAGRAM];
    let header = Header::request(1, SwitchId(1), 1);
    let too_much = [0u8; MAX_DATAGRAM];
    let err = encode_request(
        &header,
        &Request::FirmwareChunk { offset: 0 },
        &too_much,
        &Key::insecure_public(),
        &mut out,
    )
    .expect_err("too large");
    assert!(
        matches!(err, EncodeError::TooLarge { len } if len > MAX_DATAGRAM),
        "{err:?}"
    );
    let mut small = [0u8; 70];
    let err = encode_request(
        &header,
        &Request::CsrWrite {
            addr: u32::MAX,
            value: u32::MAX,
        },
        &[],
        &Key::insecure_public(),
        &mut small,
    )
    .expect_err("buffer too small");
    assert_eq!(
        err,
        EncodeError::BufferTooSmall {
            need: HEADER_LEN + 11
        }
    );
}
