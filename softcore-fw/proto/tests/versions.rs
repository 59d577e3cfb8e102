//! A switch answers a client only with what the client's protocol version
//! knows (the crate's versioning rules): a variant appended later reaches
//! an older client as `Unsupported`, which that client can decode.

mod support;

use support::{key, request_datagram, verifier, SWITCH};
use weft_proto::*;

/// The owned-register refusal, introduced in version 2.
const REFUSAL: Error = Error::FabricOwnedRegister {
    fabric_id: FabricId(0x0300),
    offset: 0x04,
};

/// What a client at `version` reads when the switch answers `response`.
fn answered_at(version: u16, response: Response) -> Response {
    let mut responder = Responder::<2>::new(verifier());
    let sent = Header {
        version,
        ..Header::request(1, SWITCH, 10)
    };
    let request = Request::ConfigWrite {
        target: FabricId(0x0300),
        offset: 0x04,
        width: AccessWidth::Word,
        value: 0,
    };
    let datagram = request_datagram(&sent, &request, &[]);
    let mut out = [0u8; MAX_DATAGRAM];
    let len = responder.answer(&datagram, &mut out, |_, _| response);
    decode_response(&out[..len], &key(), &sent)
        .expect("an authentic answer")
        .response
}

#[test]
fn a_client_of_the_current_version_gets_the_new_error() {
    assert_eq!(
        answered_at(PROTOCOL_VERSION, Response::Error(REFUSAL)),
        Response::Error(REFUSAL)
    );
}

#[test]
fn a_version_1_client_gets_unsupported_instead_of_a_version_2_error() {
    assert_eq!(REFUSAL.introduced_in(), 2);
    assert_eq!(
        answered_at(1, Response::Error(REFUSAL)),
        Response::Error(Error::Unsupported)
    );
    let failed = Response::Operation(OperationReport {
        op: OperationId(3),
        state: OperationState::Failed { reason: REFUSAL },
    });
    assert_eq!(answered_at(1, failed), Response::Error(Error::Unsupported));
}

#[test]
fn what_version_1_knows_reaches_a_version_1_client_unchanged() {
    let busy = Response::Error(Error::Busy { retry_after_ms: 5 });
    assert_eq!(answered_at(1, busy.clone()), busy);
    assert_eq!(answered_at(1, Response::Done), Response::Done);
}

#[test]
fn a_version_1_client_reads_an_event_page_without_the_version_2_kinds() {
    let bound = Event {
        seq: EventSeq(7),
        time_ms: 0,
        kind: EventKind::Bound {
            host: HostIndex(1),
            slot: SlotIndex(0),
            fabric_id: FabricId(0x0300),
        },
    };
    let drops = Event {
        seq: EventSeq(8),
        time_ms: 0,
        kind: EventKind::IsolationDrops {
            at: PortRef {
                switch: SWITCH,
                port: PortIndex(2),
            },
            check: IsolationCheck::Unbound,
            count: 3,
        },
    };
    let page = |events: &[Event]| {
        Response::Events(EventPage {
            oldest: EventSeq(0),
            events: events.iter().copied().collect(),
            next: EventSeq(9),
        })
    };
    assert_eq!(page(&[bound, drops]).introduced_in(), 2);
    assert_eq!(page(&[bound]).introduced_in(), 1);
    assert_eq!(answered_at(1, page(&[bound, drops])), page(&[bound]));
    assert_eq!(
        answered_at(PROTOCOL_VERSION, page(&[bound, drops])),
        page(&[bound, drops])
    );
}

#[test]
fn a_version_2_client_reads_counters_without_the_version_3_kinds() {
    let counters = |kinds: &[CounterKind]| {
        Response::Counters(PortCounters {
            port: PortIndex(1),
            values: kinds
                .iter()
                .map(|&kind| CounterValue { kind, value: 5 })
                .collect(),
        })
    };
    let all = [
        CounterKind::RxTlps,
        CounterKind::TxWireBytes,
        CounterKind::DroppedMalformed,
        CounterKind::DroppedPortDisabled,
    ];
    let known = [CounterKind::RxTlps, CounterKind::DroppedMalformed];
    assert_eq!(counters(&all).introduced_in(), 3);
    assert_eq!(counters(&known).introduced_in(), 1);
    assert_eq!(answered_at(2, counters(&all)), counters(&known));
    assert_eq!(
        answered_at(PROTOCOL_VERSION, counters(&all)),
        counters(&all)
    );
}

#[test]
fn a_version_2_client_gets_unsupported_instead_of_a_version_3_refusal() {
    let refusal = Error::HostPort {
        port: PortIndex(0),
        host: HostIndex(0),
    };
    assert_eq!(
        answered_at(2, Response::Error(refusal.clone())),
        Response::Error(Error::Unsupported)
    );
    assert_eq!(
        answered_at(PROTOCOL_VERSION, Response::Error(refusal.clone())),
        Response::Error(refusal)
    );
}

#[test]
fn a_version_5_client_is_told_a_not_responding_port_is_unused() {
    let port = |role| PortInfo {
        at: PortRef {
            switch: SWITCH,
            port: PortIndex(2),
        },
        role,
        link: LinkStatus {
            state: LinkState::Up,
            speed: Some(LinkSpeed::Gen3),
            width: 16,
        },
        max_speed: LinkSpeed::Gen3,
        max_width: 16,
    };
    let page = |role| {
        Response::Topology(TopologyPage {
            generation: Generation(1),
            items: [TopologyItem::Port(port(role))].into_iter().collect(),
            next: None,
        })
    };
    assert_eq!(page(PortRole::NotResponding).introduced_in(), 6);
    assert_eq!(page(PortRole::Unused).introduced_in(), 1);
    assert_eq!(
        answered_at(5, page(PortRole::NotResponding)),
        page(PortRole::Unused)
    );
    assert_eq!(
        answered_at(PROTOCOL_VERSION, page(PortRole::NotResponding)),
        page(PortRole::NotResponding)
    );
    // The event kind is left out of an older client's page.
    let event = |seq, kind| Event {
        seq: EventSeq(seq),
        time_ms: 0,
        kind,
    };
    let events = |events: &[Event]| {
        Response::Events(EventPage {
            oldest: EventSeq(0),
            events: events.iter().copied().collect(),
            next: EventSeq(2),
        })
    };
    let hung = event(
        0,
        EventKind::PortNotResponding {
            at: port(PortRole::NotResponding).at,
        },
    );
    let saved = event(1, EventKind::ConfigSaved);
    assert_eq!(answered_at(5, events(&[hung, saved])), events(&[saved]));
    assert_eq!(
        answered_at(PROTOCOL_VERSION, events(&[hung, saved])),
        events(&[hung, saved])
    );
    // Version 7's device below a conventional switch: left out before 7.
    let device = event(
        0,
        EventKind::DeviceNotResponding {
            at: port(PortRole::Endpoint).at,
            fabric_id: FabricId(0x0500),
        },
    );
    assert_eq!(answered_at(6, events(&[device, saved])), events(&[saved]));
    assert_eq!(
        answered_at(7, events(&[device, saved])),
        events(&[device, saved])
    );
}
