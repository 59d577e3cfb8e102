//! Golden bytes: the encoding of every message variant, frozen.
//!
//! DO NOT CHANGE THESE BYTES. Clients and switches in the field speak this
//! encoding; a change here breaks them silently. When a variant is appended,
//! add a new vector for it (and bump `PROTOCOL_VERSION`); never edit or
//! remove an existing one. If a test here fails, the code changed the wire
//! format: fix the code, not the vector.
//!
//! The vectors were produced once by the encoder and then frozen. The MACs of
//! the whole-datagram vectors were checked independently with Python's
//! `hmac` and `hashlib` over bytes 0..32 and 64.. of each datagram.

use weft_proto::heapless::{String, Vec};
use weft_proto::*;

/// SHA-256 of "test" (FIPS 180-4), a digest to put in a firmware prepare.
const DIGEST: [u8; 32] = [
    0x9f, 0x86, 0xd0, 0x81, 0x88, 0x4c, 0x7d, 0x65, 0x9a, 0x2f, 0xea, 0xa0, 0xc5, 0x5a, 0xd0, 0x15,
    0xa3, 0xbf, 0x4f, 0x1b, 0x2b, 0x0b, 0x82, 0x2c, 0xd1, 0x5d, 0x6c, 0x15, 0xb0, 0xf0, 0x0a, 0x08,
];

/// The postcard body of each request sample, by variant, in variant order.
const REQUEST_BODIES: &[(&str, &str)] = &[
    ("Ping", "00"),
    ("Identify", "01"),
    ("Topology", "02ac0201f8acd19101"),
    ("VirtualSwitch", "0302"),
    ("Bind", "04010302800681060107"),
    ("Unbind", "0501030100"),
    ("SetNumVfs", "06800a10"),
    ("PortControl", "070502"),
    ("ReadCounters", "0804"),
    ("ClearCounters", "0901040108"),
    ("ReadEvents", "0ac0843d"),
    ("SaveConfig", "0b"),
    ("RestoreConfig", "0c"),
    (
        "FirmwarePrepare",
        "0d8080109f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    ),
    ("FirmwareChunk", "0e808008"),
    ("FirmwareStatus", "0f"),
    ("FirmwarePrepareCommit", "10"),
    ("FirmwareCommit", "11effdb6f50d"),
    ("FirmwareAbort", "12"),
    ("ResetArm", "1301"),
    ("ResetTrigger", "1484868808"),
    ("CsrRead", "159080808004"),
    ("CsrWrite", "1694808080048180808008"),
    ("ConfigRead", "178006800202"),
    ("ConfigWrite", "188006040106"),
    ("OperationStatus", "192a"),
];

/// The postcard body of each response sample, by variant, in variant order.
const RESPONSE_BODIES: &[(&str, &str)] = &[
    ("Pong", "00"),
    ("Identity", "018180d0b2d4e81500010207673161326233630101056163373031048301"),
    ("Topology", "02090400010561633730310401010103020002010208020100010000000003100380060201de21b04680840c0100020180808080108080808080020110040101b146000101000104"),
    ("VirtualSwitch", "030102010310090200020180060100"),
    ("Done", "04"),
    ("InProgress", "052a"),
    ("Operation", "062a021001"),
    ("Counters", "07020200959aef3a0703"),
    ("Events", "080a0211e0d403070100800612dad6030980060180800113"),
    ("FirmwareStatus", "09018080108080080000"),
    ("ChunkAccepted", "0a808808"),
    ("CommitPrepared", "0beffdb6f50d"),
    ("ResetArmed", "0c848688088827"),
    ("Csr", "0d90808080048180808008"),
    ("Config", "0e800600dea1c09902"),
    ("Error", "0f06fa01"),
];

/// The postcard body of each error sample, by variant, in variant order.
const ERROR_BODIES: &[(&str, &str)] = &[
    ("Unauthenticated", "00"),
    ("Replayed", "01"),
    ("WrongSwitch", "028180d0b2d4e815"),
    ("WrongVersion", "030101"),
    ("Malformed", "04"),
    ("Unsupported", "05"),
    ("Busy", "06fa01"),
    ("StaleGeneration", "070a"),
    ("NoSuchHost", "0809"),
    ("NoSuchSlot", "090128"),
    ("NoSuchPort", "0ac8"),
    ("NoSuchEndpoint", "0b8012"),
    ("NoSuchOperation", "0c07"),
    ("EndpointBusy", "0d80060201"),
    ("SlotOccupied", "0e01008008"),
    ("SlotEmpty", "0f0102"),
    ("HostLinkDown", "1003"),
    ("NoFunctions", "11"),
    ("NotSameDevice", "128808"),
    ("NotSriovCapable", "138006"),
    ("TooManyVfs", "14800a08"),
    ("VfBound", "15800a810a"),
    ("BadCursor", "16e807"),
    ("FirmwareTooLarge", "17808040"),
    ("NoUpdateInProgress", "18"),
    ("UpdateInProgress", "19"),
    ("BadChunk", "1a808008"),
    ("ImageIncomplete", "1b808008808010"),
    ("DigestMismatch", "1c"),
    ("BadToken", "1d"),
    ("TokenExpired", "1e"),
    ("CsrOutOfRange", "1ff0ffffff0f"),
    ("Misaligned", "20820202"),
    ("ConfigOutOfRange", "218020"),
    ("ConfigAccessFailed", "22800600"),
    ("FlashFailed", "2302"),
    ("NoSavedConfig", "24"),
    ("SavedConfigCorrupt", "25"),
    // Protocol version 2.
    ("FabricOwnedRegister", "26800610"),
    ("CounterTooOld", "27808ec7ddc1c4820301"),
    // Protocol version 3.
    ("HostPort", "280501"),
    ("PortDisabled", "2905"),
    // Protocol version 4: variant 42, host 1, slot 3, operation 7; then
    // variant 43, address 0x4001_0000.
    ("UnbindInProgress", "2a010307"),
    ("FabricOwnedCsr", "2b8080848004"),
];

/// The postcard bytes of the event kinds appended in protocol version 2,
/// each alone (variants 15 to 19 of `EventKind`).
const VERSION_2_EVENT_KINDS: &[(&str, &str)] = &[
    ("PortLinkUp", "0f0201"),
    ("PortLinkDown", "108180d0b2d4e81503"),
    ("HotPlugSignalled", "11010201"),
    ("BindingNotRestored", "120100800601"),
    ("IsolationDrops", "13020402ac02"),
];

/// The postcard bytes of the event kind appended in protocol version 3
/// (variant 20 of `EventKind`).
const VERSION_3_EVENT_KINDS: &[(&str, &str)] = &[("PortControlled", "140301")];

/// The postcard bytes of the event kind appended in protocol version 5
/// (variant 21 of `EventKind`, slot B).
const VERSION_5_EVENT_KINDS: &[(&str, &str)] = &[("FirmwareCheckedIn", "1501")];

/// The postcard bytes of what protocol version 6 appended: the event kind
/// `PortNotResponding` (variant 22 of `EventKind`; switch 0x0102, port 3)
/// and the port role `NotResponding` (variant 4 of `PortRole`).
const VERSION_6_EVENT_KINDS: &[(&str, &str)] = &[("PortNotResponding", "16820203")];
const VERSION_6_PORT_ROLES: &[(&str, &str)] = &[("NotResponding", "04")];

/// The postcard bytes of the event kind appended in protocol version 7:
/// `DeviceNotResponding` (variant 23 of `EventKind`; switch 0x0102, port 3,
/// fabric ID 05:00.0, 0x0500 as a varint: 0x80 0x0a).
const VERSION_7_EVENT_KINDS: &[(&str, &str)] = &[("DeviceNotResponding", "17820203800a")];

/// The postcard bytes of the counter kinds appended in protocol version 3,
/// each alone (variants 16 to 30 of `CounterKind`).
const VERSION_3_COUNTER_KINDS: &[(CounterKind, &str)] = &[
    (CounterKind::TxPosted, "10"),
    (CounterKind::TxNonPosted, "11"),
    (CounterKind::TxCompletions, "12"),
    (CounterKind::RxWireBytes, "13"),
    (CounterKind::TxWireBytes, "14"),
    (CounterKind::DroppedPortDisabled, "15"),
    (CounterKind::DroppedUnsupportedType, "16"),
    (CounterKind::DroppedRoutesToIngress, "17"),
    (CounterKind::DroppedUnexpectedCompletion, "18"),
    (CounterKind::DroppedUnknownFunction, "19"),
    (CounterKind::DroppedUnbound, "1a"),
    (CounterKind::DroppedSpoofedRequester, "1b"),
    (CounterKind::DroppedNoWindow, "1c"),
    (CounterKind::DroppedForbidden, "1d"),
    (CounterKind::DroppedOutsideAperture, "1e"),
];

/// The key of the whole-datagram vectors: bytes 0, 1, ..., 31.
fn test_key() -> Key {
    Key::from_bytes(core::array::from_fn(|i| i as u8))
}

const SWITCH: SwitchId = SwitchId(0x5745_4654_0001);

/// The `Bind` sample as request 0x01020304 with counter 1_700_000_000_000_000.
const BIND_DATAGRAM: &str = "57454654010001000403020101005446455700000a00000000401e18240a0600\
    eed31c1ee938ce27627a41b545d733dacc4800cdf24e1ae84c4f21e5f612c523\
    04010302800681060107";

/// `FirmwareChunk { offset: 1024 }` with trailing bytes a0..af, request
/// 0x01020305, counter 1_700_000_000_000_001.
const CHUNK_DATAGRAM: &str = "57454654010001000503020101005446455700000300100001401e18240a0600\
    a2813ffcde2837449fbd7c2cb64d1f0ff6da7b739f6b917b786eefa36c5a9d83\
    0e8008a0a1a2a3a4a5a6a7a8a9aaabacadaeaf";

/// `InProgress { op: 42 }` answering the bind above.
const RESPONSE_DATAGRAM: &str = "57454654010002000403020101005446455700000200000000401e18240a0600\
    193789c95ce01852570155fa2f3345e6f000e118032c0857303b79e36012237b\
    052a";

/// `Error(CounterTooOld { accepted_above: 1_700_000_060_000_000,
/// may_have_run: false })` at protocol version 2, answering request
/// 0x01020306 with counter 1_699_999_990_000_000.
const COUNTER_TOO_OLD_DATAGRAM: &str =
    "57454654020002000603020101005446455700000b00000080a98517240a0600\
    37d4546cbb054b3bac239a21538d8173c75257941b08d80a7249f4cfecb9fa95\
    0f27808ec7ddc1c4820300";

/// `Ping` to any switch, request 1, counter 1, under the insecure public key.
const INSECURE_PING_DATAGRAM: &str =
    "5745465401000100010000000000000000000000010000000100000000000000\
    cc2208989393d2b56647eac1b6941a3b84966a81c2ec9f1eb7c85f8046e00d64\
    00";

fn functions(ids: &[u16]) -> BoundFunctions {
    let mut v = Vec::new();
    for &id in ids {
        v.push(FabricId(id)).expect("at most 8 functions");
    }
    v
}

fn name(text: &str) -> String<32> {
    String::try_from(text).expect("short name")
}

/// One sample of every request variant, with values that need multi-byte
/// varints where a field can hold them.
fn request_samples() -> [(&'static str, Request); 26] {
    [
        ("Ping", Request::Ping),
        ("Identify", Request::Identify),
        (
            "Topology",
            Request::Topology {
                cursor: TopologyCursor(300),
                generation: Some(Generation(0x1234_5678)),
            },
        ),
        (
            "VirtualSwitch",
            Request::VirtualSwitch { host: HostIndex(2) },
        ),
        (
            "Bind",
            Request::Bind {
                host: HostIndex(1),
                slot: SlotIndex(3),
                functions: functions(&[0x0300, 0x0301]),
                if_generation: Some(Generation(7)),
            },
        ),
        (
            "Unbind",
            Request::Unbind {
                host: HostIndex(1),
                slot: SlotIndex(3),
                mode: UnbindMode::Managed,
                if_generation: None,
            },
        ),
        (
            "SetNumVfs",
            Request::SetNumVfs {
                endpoint: FabricId(0x0500),
                num_vfs: 16,
            },
        ),
        (
            "PortControl",
            Request::PortControl {
                port: PortIndex(5),
                action: PortAction::HotReset,
            },
        ),
        ("ReadCounters", Request::ReadCounters { port: PortIndex(4) }),
        (
            "ClearCounters",
            Request::ClearCounters {
                port: Some(PortIndex(4)),
                kind: Some(CounterKind::DroppedIsolation),
            },
        ),
        (
            "ReadEvents",
            Request::ReadEvents {
                from: EventSeq(1_000_000),
            },
        ),
        ("SaveConfig", Request::SaveConfig),
        ("RestoreConfig", Request::RestoreConfig),
        (
            "FirmwarePrepare",
            Request::FirmwarePrepare {
                size: 262_144,
                digest: Digest(DIGEST),
            },
        ),
        ("FirmwareChunk", Request::FirmwareChunk { offset: 131_072 }),
        ("FirmwareStatus", Request::FirmwareStatus),
        ("FirmwarePrepareCommit", Request::FirmwarePrepareCommit),
        (
            "FirmwareCommit",
            Request::FirmwareCommit {
                token: Token(0xdead_beef),
            },
        ),
        ("FirmwareAbort", Request::FirmwareAbort),
        (
            "ResetArm",
            Request::ResetArm {
                scope: ResetScope::Switch,
            },
        ),
        (
            "ResetTrigger",
            Request::ResetTrigger {
                token: Token(0x0102_0304),
            },
        ),
        ("CsrRead", Request::CsrRead { addr: 0x4000_0010 }),
        (
            "CsrWrite",
            Request::CsrWrite {
                addr: 0x4000_0014,
                value: 0x8000_0001,
            },
        ),
        (
            "ConfigRead",
            Request::ConfigRead {
                target: FabricId(0x0300),
                offset: 0x100,
                width: AccessWidth::Dword,
            },
        ),
        (
            "ConfigWrite",
            Request::ConfigWrite {
                target: FabricId(0x0300),
                offset: 0x04,
                width: AccessWidth::Word,
                value: 0x0006,
            },
        ),
        (
            "OperationStatus",
            Request::OperationStatus {
                op: OperationId(42),
            },
        ),
    ]
}

/// One sample of every response variant.
fn response_samples() -> [(&'static str, Response); 16] {
    let mut bars = Vec::new();
    bars.push(BarInfo {
        index: 0,
        kind: BarKind::Memory64,
        prefetchable: true,
        size: 0x1_0000_0000,
        fabric_address: 0x0010_0000_0000,
    })
    .expect("room");
    let mut items = Vec::new();
    items
        .push(TopologyItem::Switch(SwitchInfo {
            id: SwitchId(1),
            board: name("ac701"),
            ports: 4,
            manager: true,
        }))
        .expect("room");
    items
        .push(TopologyItem::Link(FabricLink {
            a: PortRef {
                switch: SwitchId(1),
                port: PortIndex(3),
            },
            b: PortRef {
                switch: SwitchId(2),
                port: PortIndex(0),
            },
            link: LinkStatus {
                state: LinkState::Up,
                speed: Some(LinkSpeed::Gen3),
                width: 8,
            },
        }))
        .expect("room");
    items
        .push(TopologyItem::Port(PortInfo {
            at: PortRef {
                switch: SwitchId(1),
                port: PortIndex(0),
            },
            role: PortRole::Host { host: HostIndex(0) },
            link: LinkStatus {
                state: LinkState::Down,
                speed: None,
                width: 0,
            },
            max_speed: LinkSpeed::Gen4,
            max_width: 16,
        }))
        .expect("room");
    items
        .push(TopologyItem::Endpoint(EndpointInfo {
            fabric_id: FabricId(0x0300),
            at: PortRef {
                switch: SwitchId(2),
                port: PortIndex(1),
            },
            vendor_id: 0x10de,
            device_id: 0x2330,
            class_code: ClassCode(0x03_02_00),
            bars,
            sriov: Some(SriovInfo {
                total_vfs: 16,
                num_vfs: 4,
                first_vf_offset: 1,
                vf_stride: 1,
                vf_device_id: 0x2331,
            }),
            physical_function: None,
            owner: Some(Owner {
                host: HostIndex(1),
                slot: SlotIndex(0),
            }),
        }))
        .expect("room");
    let mut slots = Vec::new();
    slots
        .push(SlotInfo {
            slot: SlotIndex(0),
            state: SlotState::Bound {
                functions: functions(&[0x0300]),
            },
        })
        .expect("room");
    slots
        .push(SlotInfo {
            slot: SlotIndex(1),
            state: SlotState::Empty,
        })
        .expect("room");
    let mut counters = Vec::new();
    counters
        .push(CounterValue {
            kind: CounterKind::RxTlps,
            value: 123_456_789,
        })
        .expect("room");
    counters
        .push(CounterValue {
            kind: CounterKind::DroppedNoRoute,
            value: 3,
        })
        .expect("room");
    let mut events = Vec::new();
    events
        .push(Event {
            seq: EventSeq(17),
            time_ms: 60_000,
            kind: EventKind::Bound {
                host: HostIndex(1),
                slot: SlotIndex(0),
                fabric_id: FabricId(0x0300),
            },
        })
        .expect("room");
    events
        .push(Event {
            seq: EventSeq(18),
            time_ms: 60_250,
            kind: EventKind::Aer {
                fabric_id: FabricId(0x0300),
                severity: AerSeverity::NonFatal,
                status: 0x0000_4000,
            },
        })
        .expect("room");
    [
        ("Pong", Response::Pong),
        (
            "Identity",
            Response::Identity(Identity {
                switch: SwitchId(0x5745_4654_0001),
                firmware: FirmwareVersion {
                    major: 0,
                    minor: 1,
                    patch: 2,
                    build: String::try_from("g1a2b3c").expect("short"),
                },
                protocol: 1,
                oldest_protocol: 1,
                board: name("ac701"),
                ports: 4,
                capabilities: Capabilities::BIND
                    .union(Capabilities::SRIOV)
                    .union(Capabilities::AUTHENTICATED),
            }),
        ),
        (
            "Topology",
            Response::Topology(TopologyPage {
                generation: Generation(9),
                items,
                next: Some(TopologyCursor(4)),
            }),
        ),
        (
            "VirtualSwitch",
            Response::VirtualSwitch(VirtualSwitchInfo {
                host: HostIndex(1),
                upstream: LinkStatus {
                    state: LinkState::Up,
                    speed: Some(LinkSpeed::Gen4),
                    width: 16,
                },
                generation: Generation(9),
                slots,
            }),
        ),
        ("Done", Response::Done),
        (
            "InProgress",
            Response::InProgress {
                op: OperationId(42),
            },
        ),
        (
            "Operation",
            Response::Operation(OperationReport {
                op: OperationId(42),
                state: OperationState::Failed {
                    reason: Error::HostLinkDown { host: HostIndex(1) },
                },
            }),
        ),
        (
            "Counters",
            Response::Counters(PortCounters {
                port: PortIndex(2),
                values: counters,
            }),
        ),
        (
            "Events",
            Response::Events(EventPage {
                oldest: EventSeq(10),
                events,
                next: EventSeq(19),
            }),
        ),
        (
            "FirmwareStatus",
            Response::FirmwareStatus(FirmwareStatus {
                state: UpdateState::Receiving,
                size: 262_144,
                received: 131_072,
                running: ImageSlot::A,
                next_boot: ImageSlot::A,
            }),
        ),
        (
            "ChunkAccepted",
            Response::ChunkAccepted {
                next_offset: 132_096,
            },
        ),
        (
            "CommitPrepared",
            Response::CommitPrepared {
                token: Token(0xdead_beef),
            },
        ),
        (
            "ResetArmed",
            Response::ResetArmed {
                token: Token(0x0102_0304),
                expires_in_ms: 5_000,
            },
        ),
        (
            "Csr",
            Response::Csr {
                addr: 0x4000_0010,
                value: 0x8000_0001,
            },
        ),
        (
            "Config",
            Response::Config {
                target: FabricId(0x0300),
                offset: 0,
                value: 0x2330_10de,
            },
        ),
        (
            "Error",
            Response::Error(Error::Busy {
                retry_after_ms: 250,
            }),
        ),
    ]
}

/// One sample of every error variant.
fn error_samples() -> [(&'static str, Error); 44] {
    [
        ("Unauthenticated", Error::Unauthenticated),
        ("Replayed", Error::Replayed),
        (
            "WrongSwitch",
            Error::WrongSwitch {
                ours: SwitchId(0x5745_4654_0001),
            },
        ),
        ("WrongVersion", Error::WrongVersion { ours: 1, oldest: 1 }),
        ("Malformed", Error::Malformed),
        ("Unsupported", Error::Unsupported),
        (
            "Busy",
            Error::Busy {
                retry_after_ms: 250,
            },
        ),
        (
            "StaleGeneration",
            Error::StaleGeneration {
                current: Generation(10),
            },
        ),
        ("NoSuchHost", Error::NoSuchHost { host: HostIndex(9) }),
        (
            "NoSuchSlot",
            Error::NoSuchSlot {
                host: HostIndex(1),
                slot: SlotIndex(40),
            },
        ),
        (
            "NoSuchPort",
            Error::NoSuchPort {
                port: PortIndex(200),
            },
        ),
        (
            "NoSuchEndpoint",
            Error::NoSuchEndpoint {
                fabric_id: FabricId(0x0900),
            },
        ),
        (
            "NoSuchOperation",
            Error::NoSuchOperation { op: OperationId(7) },
        ),
        (
            "EndpointBusy",
            Error::EndpointBusy {
                fabric_id: FabricId(0x0300),
                owner: Owner {
                    host: HostIndex(2),
                    slot: SlotIndex(1),
                },
            },
        ),
        (
            "SlotOccupied",
            Error::SlotOccupied {
                host: HostIndex(1),
                slot: SlotIndex(0),
                bound: FabricId(0x0400),
            },
        ),
        (
            "SlotEmpty",
            Error::SlotEmpty {
                host: HostIndex(1),
                slot: SlotIndex(2),
            },
        ),
        ("HostLinkDown", Error::HostLinkDown { host: HostIndex(3) }),
        ("NoFunctions", Error::NoFunctions),
        (
            "NotSameDevice",
            Error::NotSameDevice {
                fabric_id: FabricId(0x0408),
            },
        ),
        (
            "NotSriovCapable",
            Error::NotSriovCapable {
                fabric_id: FabricId(0x0300),
            },
        ),
        (
            "TooManyVfs",
            Error::TooManyVfs {
                fabric_id: FabricId(0x0500),
                total_vfs: 8,
            },
        ),
        (
            "VfBound",
            Error::VfBound {
                fabric_id: FabricId(0x0500),
                vf: FabricId(0x0501),
            },
        ),
        (
            "BadCursor",
            Error::BadCursor {
                cursor: TopologyCursor(1000),
            },
        ),
        (
            "FirmwareTooLarge",
            Error::FirmwareTooLarge { max: 1_048_576 },
        ),
        ("NoUpdateInProgress", Error::NoUpdateInProgress),
        ("UpdateInProgress", Error::UpdateInProgress),
        ("BadChunk", Error::BadChunk { resume_at: 131_072 }),
        (
            "ImageIncomplete",
            Error::ImageIncomplete {
                received: 131_072,
                size: 262_144,
            },
        ),
        ("DigestMismatch", Error::DigestMismatch),
        ("BadToken", Error::BadToken),
        ("TokenExpired", Error::TokenExpired),
        ("CsrOutOfRange", Error::CsrOutOfRange { addr: 0xffff_fff0 }),
        (
            "Misaligned",
            Error::Misaligned {
                offset: 0x102,
                width: AccessWidth::Dword,
            },
        ),
        (
            "ConfigOutOfRange",
            Error::ConfigOutOfRange { offset: 0x1000 },
        ),
        (
            "ConfigAccessFailed",
            Error::ConfigAccessFailed {
                fabric_id: FabricId(0x0300),
                status: CompletionStatus::UnsupportedRequest,
            },
        ),
        (
            "FlashFailed",
            Error::FlashFailed {
                op: FlashOp::Program,
            },
        ),
        ("NoSavedConfig", Error::NoSavedConfig),
        ("SavedConfigCorrupt", Error::SavedConfigCorrupt),
        (
            "FabricOwnedRegister",
            Error::FabricOwnedRegister {
                fabric_id: FabricId(0x0300),
                offset: 0x10,
            },
        ),
        (
            "CounterTooOld",
            Error::CounterTooOld {
                accepted_above: 1_700_000_060_000_000,
                may_have_run: true,
            },
        ),
        (
            "HostPort",
            Error::HostPort {
                port: PortIndex(5),
                host: HostIndex(1),
            },
        ),
        ("PortDisabled", Error::PortDisabled { port: PortIndex(5) }),
        (
            "UnbindInProgress",
            Error::UnbindInProgress {
                host: HostIndex(1),
                slot: SlotIndex(3),
                op: OperationId(7),
            },
        ),
        (
            "FabricOwnedCsr",
            Error::FabricOwnedCsr { addr: 0x4001_0000 },
        ),
    ]
}

/// The name of a request's variant. The match has no wildcard, so a new
/// variant does not compile until it is named here, and the coverage test
/// then asks for its vector.
fn request_name(request: &Request) -> &'static str {
    match request {
        Request::Ping => "Ping",
        Request::Identify => "Identify",
        Request::Topology { .. } => "Topology",
        Request::VirtualSwitch { .. } => "VirtualSwitch",
        Request::Bind { .. } => "Bind",
        Request::Unbind { .. } => "Unbind",
        Request::SetNumVfs { .. } => "SetNumVfs",
        Request::PortControl { .. } => "PortControl",
        Request::ReadCounters { .. } => "ReadCounters",
        Request::ClearCounters { .. } => "ClearCounters",
        Request::ReadEvents { .. } => "ReadEvents",
        Request::SaveConfig => "SaveConfig",
        Request::RestoreConfig => "RestoreConfig",
        Request::FirmwarePrepare { .. } => "FirmwarePrepare",
        Request::FirmwareChunk { .. } => "FirmwareChunk",
        Request::FirmwareStatus => "FirmwareStatus",
        Request::FirmwarePrepareCommit => "FirmwarePrepareCommit",
        Request::FirmwareCommit { .. } => "FirmwareCommit",
        Request::FirmwareAbort => "FirmwareAbort",
        Request::ResetArm { .. } => "ResetArm",
        Request::ResetTrigger { .. } => "ResetTrigger",
        Request::CsrRead { .. } => "CsrRead",
        Request::CsrWrite { .. } => "CsrWrite",
        Request::ConfigRead { .. } => "ConfigRead",
        Request::ConfigWrite { .. } => "ConfigWrite",
        Request::OperationStatus { .. } => "OperationStatus",
    }
}

/// The name of a response's variant (no wildcard, as for requests).
fn response_name(response: &Response) -> &'static str {
    match response {
        Response::Pong => "Pong",
        Response::Identity(..) => "Identity",
        Response::Topology(..) => "Topology",
        Response::VirtualSwitch(..) => "VirtualSwitch",
        Response::Done => "Done",
        Response::InProgress { .. } => "InProgress",
        Response::Operation(..) => "Operation",
        Response::Counters(..) => "Counters",
        Response::Events(..) => "Events",
        Response::FirmwareStatus(..) => "FirmwareStatus",
        Response::ChunkAccepted { .. } => "ChunkAccepted",
        Response::CommitPrepared { .. } => "CommitPrepared",
        Response::ResetArmed { .. } => "ResetArmed",
        Response::Csr { .. } => "Csr",
        Response::Config { .. } => "Config",
        Response::Error(..) => "Error",
    }
}

/// The name of an error's variant (no wildcard, as for requests).
fn error_name(error: &Error) -> &'static str {
    match error {
        Error::Unauthenticated => "Unauthenticated",
        Error::Replayed => "Replayed",
        Error::WrongSwitch { .. } => "WrongSwitch",
        Error::WrongVersion { .. } => "WrongVersion",
        Error::Malformed => "Malformed",
        Error::Unsupported => "Unsupported",
        Error::Busy { .. } => "Busy",
        Error::StaleGeneration { .. } => "StaleGeneration",
        Error::NoSuchHost { .. } => "NoSuchHost",
        Error::NoSuchSlot { .. } => "NoSuchSlot",
        Error::NoSuchPort { .. } => "NoSuchPort",
        Error::NoSuchEndpoint { .. } => "NoSuchEndpoint",
        Error::NoSuchOperation { .. } => "NoSuchOperation",
        Error::EndpointBusy { .. } => "EndpointBusy",
        Error::SlotOccupied { .. } => "SlotOccupied",
        Error::SlotEmpty { .. } => "SlotEmpty",
        Error::HostLinkDown { .. } => "HostLinkDown",
        Error::NoFunctions => "NoFunctions",
        Error::NotSameDevice { .. } => "NotSameDevice",
        Error::NotSriovCapable { .. } => "NotSriovCapable",
        Error::TooManyVfs { .. } => "TooManyVfs",
        Error::VfBound { .. } => "VfBound",
        Error::BadCursor { .. } => "BadCursor",
        Error::FirmwareTooLarge { .. } => "FirmwareTooLarge",
        Error::NoUpdateInProgress => "NoUpdateInProgress",
        Error::UpdateInProgress => "UpdateInProgress",
        Error::BadChunk { .. } => "BadChunk",
        Error::ImageIncomplete { .. } => "ImageIncomplete",
        Error::DigestMismatch => "DigestMismatch",
        Error::BadToken => "BadToken",
        Error::TokenExpired => "TokenExpired",
        Error::CsrOutOfRange { .. } => "CsrOutOfRange",
        Error::Misaligned { .. } => "Misaligned",
        Error::ConfigOutOfRange { .. } => "ConfigOutOfRange",
        Error::ConfigAccessFailed { .. } => "ConfigAccessFailed",
        Error::FlashFailed { .. } => "FlashFailed",
        Error::NoSavedConfig => "NoSavedConfig",
        Error::SavedConfigCorrupt => "SavedConfigCorrupt",
        Error::FabricOwnedRegister { .. } => "FabricOwnedRegister",
        Error::CounterTooOld { .. } => "CounterTooOld",
        Error::HostPort { .. } => "HostPort",
        Error::PortDisabled { .. } => "PortDisabled",
        Error::UnbindInProgress { .. } => "UnbindInProgress",
        Error::FabricOwnedCsr { .. } => "FabricOwnedCsr",
    }
}

fn unhex(text: &str) -> std::vec::Vec<u8> {
    let digits: std::vec::Vec<u8> = text.bytes().filter(|b| !b.is_ascii_whitespace()).collect();
    digits
        .chunks(2)
        .map(|pair| {
            u8::from_str_radix(std::str::from_utf8(pair).expect("ascii"), 16).expect("hex digits")
        })
        .collect()
}

fn encode_body<T: serde::Serialize>(value: &T) -> std::vec::Vec<u8> {
    let mut buf = [0u8; MAX_DATAGRAM];
    postcard::to_slice(value, &mut buf)
        .expect("fits a datagram")
        .to_vec()
}

/// Checks that `samples` and `vectors` name the same variants in the same
/// order, that each sample is the variant it claims to be, that variant `i`
/// encodes with discriminant `i`, and that no variant exists past the last
/// vector (a body naming the next discriminant, padded with zeros that any
/// fields would decode from, is refused).
fn check_coverage<T: serde::de::DeserializeOwned + core::fmt::Debug>(
    samples: &[(&str, T)],
    vectors: &[(&str, &str)],
    name_of: fn(&T) -> &'static str,
) {
    assert_eq!(samples.len(), vectors.len(), "one vector per sample");
    for (i, ((sample_name, sample), (vector_name, vector))) in
        samples.iter().zip(vectors).enumerate()
    {
        assert_eq!(sample_name, vector_name, "vector {i} is out of order");
        assert_eq!(
            name_of(sample),
            *sample_name,
            "sample {i} is another variant"
        );
        assert_eq!(
            unhex(vector)[0] as usize,
            i,
            "{sample_name} is not variant {i}"
        );
    }
    let mut next = vec![vectors.len() as u8];
    next.extend([0u8; 96]);
    let decoded = postcard::take_from_bytes::<T>(&next);
    assert!(
        decoded.is_err(),
        "variant {} exists but has no golden vector: add one (got {decoded:?})",
        vectors.len()
    );
}

fn check_bodies<T>(samples: &[(&str, T)], vectors: &[(&str, &str)])
where
    T: serde::Serialize + serde::de::DeserializeOwned + PartialEq + core::fmt::Debug,
{
    for ((name, sample), (_, vector)) in samples.iter().zip(vectors) {
        let bytes = unhex(vector);
        assert_eq!(
            encode_body(sample),
            bytes,
            "{name} no longer encodes to its golden bytes"
        );
        let (decoded, rest) = postcard::take_from_bytes::<T>(&bytes).expect("golden bytes decode");
        assert!(rest.is_empty(), "{name} leaves bytes over");
        assert_eq!(
            &decoded, sample,
            "{name}'s golden bytes decode to something else"
        );
    }
}

#[test]
fn every_request_variant_has_a_vector() {
    check_coverage(&request_samples(), REQUEST_BODIES, request_name);
}

#[test]
fn every_response_variant_has_a_vector() {
    check_coverage(&response_samples(), RESPONSE_BODIES, response_name);
}

#[test]
fn every_error_variant_has_a_vector() {
    check_coverage(&error_samples(), ERROR_BODIES, error_name);
}

#[test]
fn request_bodies_are_frozen() {
    check_bodies(&request_samples(), REQUEST_BODIES);
}

#[test]
fn response_bodies_are_frozen() {
    check_bodies(&response_samples(), RESPONSE_BODIES);
}

#[test]
fn error_bodies_are_frozen() {
    check_bodies(&error_samples(), ERROR_BODIES);
}

#[test]
fn an_error_response_is_the_error_variant_then_the_error() {
    for (name, error) in error_samples() {
        let mut expected = vec![0x0f];
        expected.extend(unhex(
            ERROR_BODIES
                .iter()
                .find(|(n, _)| *n == name)
                .expect("vector")
                .1,
        ));
        assert_eq!(encode_body(&Response::Error(error)), expected, "{name}");
    }
}

/// `header` at protocol version 1, the version the datagram vectors were
/// frozen at.
fn version_1(header: Header) -> Header {
    Header {
        version: 1,
        ..header
    }
}

fn bind_sample() -> Request {
    request_samples()[4].1.clone()
}

#[test]
fn the_header_of_a_frozen_datagram_reads_as_documented() {
    let bytes = unhex(BIND_DATAGRAM);
    assert_eq!(&bytes[0..4], b"WEFT");
    assert_eq!(u16::from_le_bytes([bytes[4], bytes[5]]), 1, "version");
    assert_eq!(bytes[6], 1, "kind: request");
    assert_eq!(bytes[7], 0, "flags");
    assert_eq!(
        u32::from_le_bytes(bytes[8..12].try_into().expect("4")),
        0x0102_0304
    );
    assert_eq!(
        u64::from_le_bytes(bytes[12..20].try_into().expect("8")),
        SWITCH.0
    );
    assert_eq!(
        u16::from_le_bytes([bytes[20], bytes[21]]),
        10,
        "body length"
    );
    assert_eq!(
        u16::from_le_bytes([bytes[22], bytes[23]]),
        0,
        "trailing length"
    );
    assert_eq!(
        u64::from_le_bytes(bytes[24..32].try_into().expect("8")),
        1_700_000_000_000_000
    );
    assert_eq!(&bytes[64..], &unhex(REQUEST_BODIES[4].1)[..]);
}

#[test]
fn request_datagrams_are_frozen() {
    let key = test_key();
    let mut out = [0u8; MAX_DATAGRAM];

    let bind = version_1(Header::request(0x0102_0304, SWITCH, 1_700_000_000_000_000));
    let n = encode_request(&bind, &bind_sample(), &[], &key, &mut out).expect("encodes");
    assert_eq!(&out[..n], &unhex(BIND_DATAGRAM)[..]);

    let chunk = version_1(Header::request(0x0102_0305, SWITCH, 1_700_000_000_000_001));
    let trailing: [u8; 16] = core::array::from_fn(|i| 0xa0 + i as u8);
    let n = encode_request(
        &chunk,
        &Request::FirmwareChunk { offset: 1024 },
        &trailing,
        &key,
        &mut out,
    )
    .expect("encodes");
    assert_eq!(&out[..n], &unhex(CHUNK_DATAGRAM)[..]);

    let ping = version_1(Header::request(1, SwitchId::ANY, 1));
    let n = encode_request(
        &ping,
        &Request::Ping,
        &[],
        &Key::insecure_public(),
        &mut out,
    )
    .expect("encodes");
    assert_eq!(&out[..n], &unhex(INSECURE_PING_DATAGRAM)[..]);
}

#[test]
fn frozen_request_datagrams_still_decode() {
    let mut verifier = Verifier::new(SWITCH, test_key());
    let bind = unhex(BIND_DATAGRAM);
    let received = decode_request(&bind, &mut verifier).expect("the bind vector is accepted");
    assert_eq!(
        received.header,
        version_1(Header::request(0x0102_0304, SWITCH, 1_700_000_000_000_000))
    );
    assert_eq!(received.request, bind_sample());
    assert!(received.trailing.is_empty());

    let chunk = unhex(CHUNK_DATAGRAM);
    let received = decode_request(&chunk, &mut verifier).expect("the chunk vector is accepted");
    assert_eq!(received.request, Request::FirmwareChunk { offset: 1024 });
    assert_eq!(
        received.trailing,
        &core::array::from_fn::<u8, 16, _>(|i| 0xa0 + i as u8)[..]
    );

    let mut insecure = Verifier::new(SwitchId(77), Key::insecure_public());
    let ping = unhex(INSECURE_PING_DATAGRAM);
    let received = decode_request(&ping, &mut insecure).expect("any switch answers a ping");
    assert_eq!(received.request, Request::Ping);
}

#[test]
fn response_datagrams_are_frozen() {
    let key = test_key();
    let sent = version_1(Header::request(0x0102_0304, SWITCH, 1_700_000_000_000_000));
    let mut out = [0u8; MAX_DATAGRAM];
    let response = Response::InProgress {
        op: OperationId(42),
    };
    let reply_header = version_1(sent.reply(SWITCH));
    let n = encode_response(&reply_header, &response, &[], &key, &mut out).expect("encodes");
    let frozen = unhex(RESPONSE_DATAGRAM);
    assert_eq!(&out[..n], &frozen[..]);
    let reply = decode_response(&frozen, &key, &sent).expect("the response vector is accepted");
    assert_eq!(reply.header, reply_header);
    assert_eq!(reply.response, response);
}

fn version_2_event_kind_samples() -> [EventKind; 5] {
    [
        EventKind::PortLinkUp {
            at: PortRef {
                switch: SwitchId(2),
                port: PortIndex(1),
            },
        },
        EventKind::PortLinkDown {
            at: PortRef {
                switch: SwitchId(0x5745_4654_0001),
                port: PortIndex(3),
            },
        },
        EventKind::HotPlugSignalled {
            host: HostIndex(1),
            slot: SlotIndex(2),
            present: true,
        },
        EventKind::BindingNotRestored {
            host: HostIndex(1),
            slot: SlotIndex(0),
            fabric_id: FabricId(0x0300),
            reason: RestoreFailure::Refused,
        },
        EventKind::IsolationDrops {
            at: PortRef {
                switch: SwitchId(2),
                port: PortIndex(4),
            },
            check: IsolationCheck::NoWindow,
            count: 300,
        },
    ]
}

#[test]
fn version_2_event_kinds_are_frozen() {
    for ((name, vector), sample) in VERSION_2_EVENT_KINDS
        .iter()
        .zip(version_2_event_kind_samples())
    {
        let bytes = unhex(vector);
        assert_eq!(encode_body(&sample), bytes, "{name}");
        let (decoded, rest) =
            postcard::take_from_bytes::<EventKind>(&bytes).expect("golden bytes decode");
        assert!(rest.is_empty(), "{name} leaves bytes over");
        assert_eq!(decoded, sample, "{name}");
        assert_eq!(sample.introduced_in(), 2, "{name}");
    }
}

#[test]
fn version_3_event_and_counter_kinds_are_frozen() {
    let sample = EventKind::PortControlled {
        port: PortIndex(3),
        action: PortAction::Disable,
    };
    let (name, vector) = VERSION_3_EVENT_KINDS[0];
    let bytes = unhex(vector);
    assert_eq!(encode_body(&sample), bytes, "{name}");
    assert_eq!(
        postcard::from_bytes::<EventKind>(&bytes).expect("golden bytes decode"),
        sample
    );
    assert_eq!(sample.introduced_in(), 3);

    for (kind, vector) in VERSION_3_COUNTER_KINDS {
        let bytes = unhex(vector);
        assert_eq!(encode_body(kind), bytes, "{kind:?}");
        assert_eq!(
            postcard::from_bytes::<CounterKind>(&bytes).expect("golden bytes decode"),
            *kind
        );
        assert_eq!(kind.introduced_in(), 3, "{kind:?}");
    }
    assert_eq!(CounterKind::LinkDowns.introduced_in(), 1);
    assert!(postcard::from_bytes::<CounterKind>(&[31]).is_err());
}

#[test]
fn version_5_event_kinds_are_frozen() {
    let sample = EventKind::FirmwareCheckedIn { slot: ImageSlot::B };
    let (name, vector) = VERSION_5_EVENT_KINDS[0];
    let bytes = unhex(vector);
    assert_eq!(encode_body(&sample), bytes, "{name}");
    assert_eq!(
        postcard::from_bytes::<EventKind>(&bytes).expect("golden bytes decode"),
        sample
    );
    assert_eq!(sample.introduced_in(), 5);
}

#[test]
fn version_6_event_kinds_and_port_roles_are_frozen() {
    let sample = EventKind::PortNotResponding {
        at: PortRef {
            switch: SwitchId(0x0102),
            port: PortIndex(3),
        },
    };
    let (name, vector) = VERSION_6_EVENT_KINDS[0];
    let bytes = unhex(vector);
    assert_eq!(encode_body(&sample), bytes, "{name}");
    assert_eq!(
        postcard::from_bytes::<EventKind>(&bytes).expect("golden bytes decode"),
        sample
    );
    assert_eq!(sample.introduced_in(), 6);

    let (name, vector) = VERSION_6_PORT_ROLES[0];
    let bytes = unhex(vector);
    assert_eq!(encode_body(&PortRole::NotResponding), bytes, "{name}");
    assert_eq!(
        postcard::from_bytes::<PortRole>(&bytes).expect("golden bytes decode"),
        PortRole::NotResponding
    );
    assert_eq!(PortRole::NotResponding.introduced_in(), 6);
    assert_eq!(PortRole::Fabric.introduced_in(), 1);
    assert!(postcard::from_bytes::<PortRole>(&[5]).is_err());
}

#[test]
fn version_7_event_kinds_are_frozen() {
    let sample = EventKind::DeviceNotResponding {
        at: PortRef {
            switch: SwitchId(0x0102),
            port: PortIndex(3),
        },
        fabric_id: FabricId(0x0500),
    };
    let (name, vector) = VERSION_7_EVENT_KINDS[0];
    let bytes = unhex(vector);
    assert_eq!(encode_body(&sample), bytes, "{name}");
    assert_eq!(
        postcard::from_bytes::<EventKind>(&bytes).expect("golden bytes decode"),
        sample
    );
    assert_eq!(sample.introduced_in(), 7);
    // Nothing past them yet.
    let mut next = vec![24u8];
    next.extend([0u8; 32]);
    assert!(postcard::take_from_bytes::<EventKind>(&next).is_err());
}

#[test]
fn the_counter_too_old_datagram_is_frozen() {
    let key = test_key();
    let sent = Header {
        version: 2,
        ..Header::request(0x0102_0306, SWITCH, 1_699_999_990_000_000)
    };
    let refusal = Response::Error(Error::CounterTooOld {
        accepted_above: 1_700_000_060_000_000,
        may_have_run: false,
    });
    let mut out = [0u8; MAX_DATAGRAM];
    // The answer as a version 2 switch sent it.
    let answer = Header {
        version: 2,
        ..sent.reply(SWITCH)
    };
    let n = encode_response(&answer, &refusal, &[], &key, &mut out).expect("encodes");
    let frozen = unhex(COUNTER_TOO_OLD_DATAGRAM);
    assert_eq!(&out[..n], &frozen[..]);
    let reply = decode_response(&frozen, &key, &sent).expect("the vector is accepted");
    assert_eq!(reply.response, refusal);
}
