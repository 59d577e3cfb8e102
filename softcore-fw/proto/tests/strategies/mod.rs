//! proptest strategies for every message type, shared by the property tests.
//! Each strategy covers every variant and the full range of every field,
//! including bounded strings and lists up to their capacities.

#![allow(dead_code)]

use proptest::collection::vec as vec_of;
use proptest::prelude::*;
use weft_proto::heapless::{String, Vec};
use weft_proto::*;

/// A heapless string of up to `N` bytes of arbitrary (multi-byte) text.
pub fn bounded_string<const N: usize>() -> impl Strategy<Value = String<N>> {
    proptest::collection::vec(any::<char>(), 0..=N).prop_map(|chars| {
        let mut s = String::new();
        for c in chars {
            if s.push(c).is_err() {
                break;
            }
        }
        s
    })
}

/// A heapless vector of up to `N` items.
pub fn bounded_vec<T: core::fmt::Debug, const N: usize>(
    item: impl Strategy<Value = T>,
) -> impl Strategy<Value = Vec<T, N>> {
    vec_of(item, 0..=N).prop_map(|items| {
        let mut v = Vec::new();
        for i in items {
            let _ = v.push(i);
        }
        v
    })
}

pub fn switch_id() -> impl Strategy<Value = SwitchId> {
    any::<u64>().prop_map(SwitchId)
}
pub fn fabric_id() -> impl Strategy<Value = FabricId> {
    any::<u16>().prop_map(FabricId)
}
pub fn port() -> impl Strategy<Value = PortIndex> {
    any::<u8>().prop_map(PortIndex)
}
pub fn host() -> impl Strategy<Value = HostIndex> {
    any::<u8>().prop_map(HostIndex)
}
pub fn slot() -> impl Strategy<Value = SlotIndex> {
    any::<u8>().prop_map(SlotIndex)
}
pub fn op() -> impl Strategy<Value = OperationId> {
    any::<u32>().prop_map(OperationId)
}
pub fn seq() -> impl Strategy<Value = EventSeq> {
    any::<u64>().prop_map(EventSeq)
}
pub fn generation() -> impl Strategy<Value = Generation> {
    any::<u32>().prop_map(Generation)
}
pub fn cursor() -> impl Strategy<Value = TopologyCursor> {
    any::<u32>().prop_map(TopologyCursor)
}
pub fn token() -> impl Strategy<Value = Token> {
    any::<u32>().prop_map(Token)
}

pub fn functions() -> impl Strategy<Value = BoundFunctions> {
    bounded_vec(fabric_id())
}

pub fn unbind_mode() -> impl Strategy<Value = UnbindMode> {
    prop_oneof![
        Just(UnbindMode::Graceful),
        Just(UnbindMode::Managed),
        Just(UnbindMode::Surprise)
    ]
}

pub fn port_action() -> impl Strategy<Value = PortAction> {
    prop_oneof![
        Just(PortAction::Enable),
        Just(PortAction::Disable),
        Just(PortAction::HotReset),
        Just(PortAction::Retrain)
    ]
}

pub fn width() -> impl Strategy<Value = AccessWidth> {
    prop_oneof![
        Just(AccessWidth::Byte),
        Just(AccessWidth::Word),
        Just(AccessWidth::Dword)
    ]
}

pub fn reset_scope() -> impl Strategy<Value = ResetScope> {
    prop_oneof![Just(ResetScope::Firmware), Just(ResetScope::Switch)]
}

pub fn counter_kind() -> impl Strategy<Value = CounterKind> {
    use CounterKind::*;
    proptest::sample::select(
        &[
            RxTlps,
            TxTlps,
            RxPayloadBytes,
            TxPayloadBytes,
            RxPosted,
            RxNonPosted,
            RxCompletions,
            DroppedNoRoute,
            DroppedIsolation,
            DroppedMalformed,
            DroppedPoisoned,
            UnsupportedRequests,
            CompletionTimeouts,
            SynthesizedCompletions,
            CreditStallCycles,
            LinkDowns,
            TxPosted,
            TxNonPosted,
            TxCompletions,
            RxWireBytes,
            TxWireBytes,
            DroppedPortDisabled,
            DroppedUnsupportedType,
            DroppedRoutesToIngress,
            DroppedUnexpectedCompletion,
            DroppedUnknownFunction,
            DroppedUnbound,
            DroppedSpoofedRequester,
            DroppedNoWindow,
            DroppedForbidden,
            DroppedOutsideAperture,
        ][..],
    )
}

pub fn request() -> impl Strategy<Value = Request> {
    prop_oneof![
        Just(Request::Ping),
        Just(Request::Identify),
        (cursor(), proptest::option::of(generation()))
            .prop_map(|(cursor, generation)| Request::Topology { cursor, generation }),
        host().prop_map(|host| Request::VirtualSwitch { host }),
        (
            host(),
            slot(),
            functions(),
            proptest::option::of(generation())
        )
            .prop_map(|(host, slot, functions, if_generation)| Request::Bind {
                host,
                slot,
                functions,
                if_generation
            }),
        (
            host(),
            slot(),
            unbind_mode(),
            proptest::option::of(generation())
        )
            .prop_map(|(host, slot, mode, if_generation)| Request::Unbind {
                host,
                slot,
                mode,
                if_generation
            }),
        (fabric_id(), any::<u16>())
            .prop_map(|(endpoint, num_vfs)| Request::SetNumVfs { endpoint, num_vfs }),
        (port(), port_action()).prop_map(|(port, action)| Request::PortControl { port, action }),
        port().prop_map(|port| Request::ReadCounters { port }),
        (
            proptest::option::of(port()),
            proptest::option::of(counter_kind())
        )
            .prop_map(|(port, kind)| Request::ClearCounters { port, kind }),
        seq().prop_map(|from| Request::ReadEvents { from }),
        Just(Request::SaveConfig),
        Just(Request::RestoreConfig),
        (any::<u32>(), any::<[u8; 32]>()).prop_map(|(size, d)| Request::FirmwarePrepare {
            size,
            digest: Digest(d)
        }),
        any::<u32>().prop_map(|offset| Request::FirmwareChunk { offset }),
        Just(Request::FirmwareStatus),
        Just(Request::FirmwarePrepareCommit),
        token().prop_map(|token| Request::FirmwareCommit { token }),
        Just(Request::FirmwareAbort),
        reset_scope().prop_map(|scope| Request::ResetArm { scope }),
        token().prop_map(|token| Request::ResetTrigger { token }),
        any::<u32>().prop_map(|addr| Request::CsrRead { addr }),
        (any::<u32>(), any::<u32>()).prop_map(|(addr, value)| Request::CsrWrite { addr, value }),
        (fabric_id(), any::<u16>(), width()).prop_map(|(target, offset, width)| {
            Request::ConfigRead {
                target,
                offset,
                width,
            }
        }),
        (fabric_id(), any::<u16>(), width(), any::<u32>()).prop_map(
            |(target, offset, width, value)| {
                Request::ConfigWrite {
                    target,
                    offset,
                    width,
                    value,
                }
            }
        ),
        op().prop_map(|op| Request::OperationStatus { op }),
    ]
}

pub fn link_speed() -> impl Strategy<Value = LinkSpeed> {
    use LinkSpeed::*;
    proptest::sample::select(&[Gen1, Gen2, Gen3, Gen4, Gen5, Gen6][..])
}

pub fn link_status() -> impl Strategy<Value = LinkStatus> {
    let state = prop_oneof![
        Just(LinkState::Down),
        Just(LinkState::Training),
        Just(LinkState::Up),
        Just(LinkState::Disabled)
    ];
    (state, proptest::option::of(link_speed()), any::<u8>()).prop_map(|(state, speed, width)| {
        LinkStatus {
            state,
            speed,
            width,
        }
    })
}

pub fn port_ref() -> impl Strategy<Value = PortRef> {
    (switch_id(), port()).prop_map(|(switch, port)| PortRef { switch, port })
}

pub fn owner() -> impl Strategy<Value = Owner> {
    (host(), slot()).prop_map(|(host, slot)| Owner { host, slot })
}

pub fn bar() -> impl Strategy<Value = BarInfo> {
    let kind = prop_oneof![
        Just(BarKind::Io),
        Just(BarKind::Memory32),
        Just(BarKind::Memory64)
    ];
    (any::<u8>(), kind, any::<bool>(), any::<u64>(), any::<u64>()).prop_map(
        |(index, kind, prefetchable, size, fabric_address)| BarInfo {
            index,
            kind,
            prefetchable,
            size,
            fabric_address,
        },
    )
}

pub fn sriov() -> impl Strategy<Value = SriovInfo> {
    any::<[u16; 5]>().prop_map(
        |[total_vfs, num_vfs, first_vf_offset, vf_stride, vf_device_id]| SriovInfo {
            total_vfs,
            num_vfs,
            first_vf_offset,
            vf_stride,
            vf_device_id,
        },
    )
}

pub fn endpoint() -> impl Strategy<Value = EndpointInfo> {
    (
        fabric_id(),
        port_ref(),
        any::<(u16, u16, u32)>(),
        bounded_vec(bar()),
        proptest::option::of(sriov()),
        proptest::option::of(fabric_id()),
        proptest::option::of(owner()),
    )
        .prop_map(
            |(
                fabric_id,
                at,
                (vendor_id, device_id, class),
                bars,
                sriov,
                physical_function,
                owner,
            )| {
                EndpointInfo {
                    fabric_id,
                    at,
                    vendor_id,
                    device_id,
                    class_code: ClassCode(class),
                    bars,
                    sriov,
                    physical_function,
                    owner,
                }
            },
        )
}

pub fn port_role() -> impl Strategy<Value = PortRole> {
    prop_oneof![
        Just(PortRole::Unused),
        host().prop_map(|host| PortRole::Host { host }),
        Just(PortRole::Endpoint),
        Just(PortRole::Fabric),
        Just(PortRole::NotResponding),
    ]
}

pub fn topology_item() -> impl Strategy<Value = TopologyItem> {
    prop_oneof![
        (switch_id(), bounded_string(), any::<u8>(), any::<bool>()).prop_map(
            |(id, board, ports, manager)| TopologyItem::Switch(SwitchInfo {
                id,
                board,
                ports,
                manager
            })
        ),
        (port_ref(), port_ref(), link_status())
            .prop_map(|(a, b, link)| TopologyItem::Link(FabricLink { a, b, link })),
        (
            port_ref(),
            port_role(),
            link_status(),
            link_speed(),
            any::<u8>()
        )
            .prop_map(|(at, role, link, max_speed, max_width)| TopologyItem::Port(
                PortInfo {
                    at,
                    role,
                    link,
                    max_speed,
                    max_width
                }
            )),
        endpoint().prop_map(TopologyItem::Endpoint),
    ]
}

pub fn slot_state() -> impl Strategy<Value = SlotState> {
    prop_oneof![
        Just(SlotState::Empty),
        functions().prop_map(|functions| SlotState::Binding { functions }),
        functions().prop_map(|functions| SlotState::Bound { functions }),
        (functions(), unbind_mode())
            .prop_map(|(functions, mode)| SlotState::Unbinding { functions, mode }),
    ]
}

pub fn firmware_version() -> impl Strategy<Value = FirmwareVersion> {
    (any::<(u16, u16, u16)>(), bounded_string()).prop_map(|((major, minor, patch), build)| {
        FirmwareVersion {
            major,
            minor,
            patch,
            build,
        }
    })
}

pub fn identity() -> impl Strategy<Value = Identity> {
    (
        switch_id(),
        firmware_version(),
        any::<(u16, u16)>(),
        bounded_string(),
        any::<u8>(),
        any::<u32>(),
    )
        .prop_map(
            |(switch, firmware, (protocol, oldest_protocol), board, ports, caps)| Identity {
                switch,
                firmware,
                protocol,
                oldest_protocol,
                board,
                ports,
                capabilities: Capabilities(caps),
            },
        )
}

pub fn event_kind() -> impl Strategy<Value = EventKind> {
    let boot = proptest::sample::select(
        &[
            BootReason::PowerOn,
            BootReason::Reset,
            BootReason::Watchdog,
            BootReason::FirmwareTrial,
            BootReason::FirmwareRollback,
        ][..],
    );
    let severity = prop_oneof![
        Just(AerSeverity::Correctable),
        Just(AerSeverity::NonFatal),
        Just(AerSeverity::Fatal)
    ];
    prop_oneof![
        boot.prop_map(|reason| EventKind::Booted { reason }),
        host().prop_map(|host| EventKind::HostLinkUp { host }),
        host().prop_map(|host| EventKind::HostLinkDown { host }),
        port().prop_map(|port| EventKind::FabricLinkUp { port }),
        port().prop_map(|port| EventKind::FabricLinkDown { port }),
        fabric_id().prop_map(|fabric_id| EventKind::EndpointAdded { fabric_id }),
        fabric_id().prop_map(|fabric_id| EventKind::EndpointRemoved { fabric_id }),
        (host(), slot(), fabric_id()).prop_map(|(host, slot, fabric_id)| EventKind::Bound {
            host,
            slot,
            fabric_id
        }),
        (host(), slot(), fabric_id(), unbind_mode()).prop_map(|(host, slot, fabric_id, mode)| {
            EventKind::Unbound {
                host,
                slot,
                fabric_id,
                mode,
            }
        }),
        (fabric_id(), severity, any::<u32>()).prop_map(|(fabric_id, severity, status)| {
            EventKind::Aer {
                fabric_id,
                severity,
                status,
            }
        }),
        (fabric_id(), any::<u16>())
            .prop_map(|(fabric_id, num_vfs)| EventKind::NumVfsChanged { fabric_id, num_vfs }),
        Just(EventKind::ConfigSaved),
        Just(EventKind::ConfigRestored),
        Just(EventKind::FirmwareStaged),
        Just(EventKind::FirmwareCommitted),
        port_ref().prop_map(|at| EventKind::PortLinkUp { at }),
        port_ref().prop_map(|at| EventKind::PortLinkDown { at }),
        (host(), slot(), any::<bool>()).prop_map(|(host, slot, present)| {
            EventKind::HotPlugSignalled {
                host,
                slot,
                present,
            }
        }),
        (host(), slot(), fabric_id(), restore_failure()).prop_map(
            |(host, slot, fabric_id, reason)| EventKind::BindingNotRestored {
                host,
                slot,
                fabric_id,
                reason,
            }
        ),
        (port_ref(), isolation_check(), any::<u32>())
            .prop_map(|(at, check, count)| { EventKind::IsolationDrops { at, check, count } }),
        (port(), port_action())
            .prop_map(|(port, action)| EventKind::PortControlled { port, action }),
        image_slot().prop_map(|slot| EventKind::FirmwareCheckedIn { slot }),
        port_ref().prop_map(|at| EventKind::PortNotResponding { at }),
        (port_ref(), fabric_id())
            .prop_map(|(at, fabric_id)| EventKind::DeviceNotResponding { at, fabric_id }),
    ]
}

pub fn restore_failure() -> impl Strategy<Value = RestoreFailure> {
    prop_oneof![
        Just(RestoreFailure::FunctionGone),
        Just(RestoreFailure::Refused)
    ]
}

pub fn isolation_check() -> impl Strategy<Value = IsolationCheck> {
    proptest::sample::select(
        &[
            IsolationCheck::Unbound,
            IsolationCheck::SpoofedRequester,
            IsolationCheck::NoWindow,
            IsolationCheck::Forbidden,
            IsolationCheck::OutsideAperture,
        ][..],
    )
}

pub fn event() -> impl Strategy<Value = Event> {
    (seq(), any::<u64>(), event_kind()).prop_map(|(seq, time_ms, kind)| Event {
        seq,
        time_ms,
        kind,
    })
}

pub fn error() -> impl Strategy<Value = Error> {
    let completion = prop_oneof![
        Just(CompletionStatus::UnsupportedRequest),
        Just(CompletionStatus::CompleterAbort),
        Just(CompletionStatus::RetryStatus),
        Just(CompletionStatus::Timeout),
    ];
    let flash = prop_oneof![
        Just(FlashOp::Read),
        Just(FlashOp::Erase),
        Just(FlashOp::Program),
        Just(FlashOp::Verify)
    ];
    prop_oneof![
        Just(Error::Unauthenticated),
        Just(Error::Replayed),
        switch_id().prop_map(|ours| Error::WrongSwitch { ours }),
        any::<(u16, u16)>().prop_map(|(ours, oldest)| Error::WrongVersion { ours, oldest }),
        Just(Error::Malformed),
        Just(Error::Unsupported),
        any::<u32>().prop_map(|retry_after_ms| Error::Busy { retry_after_ms }),
        generation().prop_map(|current| Error::StaleGeneration { current }),
        host().prop_map(|host| Error::NoSuchHost { host }),
        (host(), slot()).prop_map(|(host, slot)| Error::NoSuchSlot { host, slot }),
        port().prop_map(|port| Error::NoSuchPort { port }),
        fabric_id().prop_map(|fabric_id| Error::NoSuchEndpoint { fabric_id }),
        op().prop_map(|op| Error::NoSuchOperation { op }),
        (fabric_id(), owner())
            .prop_map(|(fabric_id, owner)| Error::EndpointBusy { fabric_id, owner }),
        (host(), slot(), fabric_id()).prop_map(|(host, slot, bound)| Error::SlotOccupied {
            host,
            slot,
            bound
        }),
        (host(), slot()).prop_map(|(host, slot)| Error::SlotEmpty { host, slot }),
        host().prop_map(|host| Error::HostLinkDown { host }),
        Just(Error::NoFunctions),
        fabric_id().prop_map(|fabric_id| Error::NotSameDevice { fabric_id }),
        fabric_id().prop_map(|fabric_id| Error::NotSriovCapable { fabric_id }),
        (fabric_id(), any::<u16>()).prop_map(|(fabric_id, total_vfs)| Error::TooManyVfs {
            fabric_id,
            total_vfs
        }),
        (fabric_id(), fabric_id()).prop_map(|(fabric_id, vf)| Error::VfBound { fabric_id, vf }),
        cursor().prop_map(|cursor| Error::BadCursor { cursor }),
        any::<u32>().prop_map(|max| Error::FirmwareTooLarge { max }),
        Just(Error::NoUpdateInProgress),
        Just(Error::UpdateInProgress),
        any::<u32>().prop_map(|resume_at| Error::BadChunk { resume_at }),
        any::<(u32, u32)>().prop_map(|(received, size)| Error::ImageIncomplete { received, size }),
        Just(Error::DigestMismatch),
        Just(Error::BadToken),
        Just(Error::TokenExpired),
        any::<u32>().prop_map(|addr| Error::CsrOutOfRange { addr }),
        (any::<u32>(), width()).prop_map(|(offset, width)| Error::Misaligned { offset, width }),
        any::<u16>().prop_map(|offset| Error::ConfigOutOfRange { offset }),
        (fabric_id(), completion)
            .prop_map(|(fabric_id, status)| Error::ConfigAccessFailed { fabric_id, status }),
        flash.prop_map(|op| Error::FlashFailed { op }),
        Just(Error::NoSavedConfig),
        Just(Error::SavedConfigCorrupt),
        (fabric_id(), any::<u16>())
            .prop_map(|(fabric_id, offset)| Error::FabricOwnedRegister { fabric_id, offset }),
        (any::<u64>(), any::<bool>()).prop_map(|(accepted_above, may_have_run)| {
            Error::CounterTooOld {
                accepted_above,
                may_have_run,
            }
        }),
        (port(), host()).prop_map(|(port, host)| Error::HostPort { port, host }),
        port().prop_map(|port| Error::PortDisabled { port }),
    ]
}

pub fn update_state() -> impl Strategy<Value = UpdateState> {
    prop_oneof![
        Just(UpdateState::Idle),
        Just(UpdateState::Receiving),
        Just(UpdateState::Verified),
        Just(UpdateState::CommitArmed),
        Just(UpdateState::Trial),
        error().prop_map(|reason| UpdateState::Failed { reason }),
    ]
}

pub fn image_slot() -> impl Strategy<Value = ImageSlot> {
    prop_oneof![Just(ImageSlot::A), Just(ImageSlot::B)]
}

pub fn operation_state() -> impl Strategy<Value = OperationState> {
    prop_oneof![
        any::<u8>().prop_map(|percent| OperationState::Running { percent }),
        Just(OperationState::Succeeded),
        error().prop_map(|reason| OperationState::Failed { reason }),
    ]
}

pub fn response() -> impl Strategy<Value = Response> {
    prop_oneof![
        Just(Response::Pong),
        identity().prop_map(Response::Identity),
        (
            generation(),
            bounded_vec(topology_item()),
            proptest::option::of(cursor())
        )
            .prop_map(
                |(generation, items, next)| Response::Topology(TopologyPage {
                    generation,
                    items,
                    next
                })
            ),
        (
            host(),
            link_status(),
            generation(),
            bounded_vec::<_, MAX_SLOTS>((slot(), slot_state()))
        )
            .prop_map(|(host, upstream, generation, slots)| {
                let mut infos = Vec::new();
                for (slot, state) in slots {
                    let _ = infos.push(SlotInfo { slot, state });
                }
                Response::VirtualSwitch(VirtualSwitchInfo {
                    host,
                    upstream,
                    generation,
                    slots: infos,
                })
            }),
        Just(Response::Done),
        op().prop_map(|op| Response::InProgress { op }),
        (op(), operation_state())
            .prop_map(|(op, state)| Response::Operation(OperationReport { op, state })),
        (
            port(),
            bounded_vec::<_, MAX_COUNTERS>((counter_kind(), any::<u64>()))
        )
            .prop_map(|(port, pairs)| {
                let mut values = Vec::new();
                for (kind, value) in pairs {
                    let _ = values.push(CounterValue { kind, value });
                }
                Response::Counters(PortCounters { port, values })
            }),
        (seq(), bounded_vec(event()), seq()).prop_map(|(oldest, events, next)| Response::Events(
            EventPage {
                oldest,
                events,
                next
            }
        )),
        (
            update_state(),
            any::<(u32, u32)>(),
            image_slot(),
            image_slot()
        )
            .prop_map(|(state, (size, received), running, next_boot)| {
                Response::FirmwareStatus(FirmwareStatus {
                    state,
                    size,
                    received,
                    running,
                    next_boot,
                })
            }),
        any::<u32>().prop_map(|next_offset| Response::ChunkAccepted { next_offset }),
        token().prop_map(|token| Response::CommitPrepared { token }),
        (token(), any::<u32>()).prop_map(|(token, expires_in_ms)| Response::ResetArmed {
            token,
            expires_in_ms
        }),
        (any::<u32>(), any::<u32>()).prop_map(|(addr, value)| Response::Csr { addr, value }),
        (fabric_id(), any::<u16>(), any::<u32>()).prop_map(|(target, offset, value)| {
            Response::Config {
                target,
                offset,
                value,
            }
        }),
        error().prop_map(Response::Error),
    ]
}

/// A request header with any id and target, and a counter above 0.
pub fn request_header() -> impl Strategy<Value = Header> {
    (any::<u32>(), switch_id(), 1..=u64::MAX)
        .prop_map(|(request_id, switch, counter)| Header::request(request_id, switch, counter))
}
