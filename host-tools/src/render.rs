//! Answers rendered for people: aligned tables, units, lspci-style IDs.
//!
//! Every function returns text ending in a newline; `--json` output does not
//! come through here but serializes the protocol's values directly.

use std::fmt::Write as _;
use std::time::Duration;

use weft_proto::{
    BarKind, Capabilities, ClassCode, CounterKind, Event, EventKind, FirmwareStatus, Identity,
    IsolationCheck, LinkSpeed, LinkState, LinkStatus, OperationReport, OperationState, PortAction,
    PortCounters, PortRef, PortRole, RestoreFailure, SlotState, UpdateState, VirtualSwitchInfo,
};

use crate::parse::show_fabric_id;
use crate::rates::PortRates;
use crate::table::Table;
use crate::topology::Topology;

/// A switch identity as `0x…`.
pub fn switch_id(id: weft_proto::SwitchId) -> String {
    format!("{:#x}", id.0)
}

/// The answer to Identify.
pub fn identity(identity: &Identity) -> String {
    let fw = &identity.firmware;
    let build = if fw.build.is_empty() {
        String::new()
    } else {
        format!(" ({})", fw.build)
    };
    let mut table = Table::new(&["", ""]);
    let mut put = |name: &str, value: String| table.row(vec![name.to_owned(), value]);
    put("switch", switch_id(identity.switch));
    put("board", identity.board.to_string());
    put(
        "firmware",
        format!("{}.{}.{}{build}", fw.major, fw.minor, fw.patch),
    );
    put(
        "protocol",
        format!(
            "{} (accepts {} to {})",
            identity.protocol, identity.oldest_protocol, identity.protocol
        ),
    );
    put("ports", identity.ports.to_string());
    put("capabilities", capabilities(identity.capabilities));
    // Skip the empty header line.
    let text = table.render();
    text.split_once('\n')
        .map_or(text.clone(), |(_, rest)| rest.to_owned())
}

/// Capability flags by name, comma-separated.
pub fn capabilities(caps: Capabilities) -> String {
    let names = [
        (Capabilities::BIND, "bind"),
        (Capabilities::SRIOV, "sr-iov"),
        (Capabilities::PEER_TO_PEER, "peer-to-peer"),
        (Capabilities::MULTI_SWITCH, "multi-switch"),
        (Capabilities::FIRMWARE_UPDATE, "firmware-update"),
        (Capabilities::PERSISTENT_CONFIG, "persistent-config"),
        (Capabilities::DIAGNOSTICS, "diagnostics"),
        (Capabilities::AUTHENTICATED, "authenticated"),
    ];
    let known: Vec<&str> = names
        .iter()
        .filter(|(flag, _)| caps.contains(*flag))
        .map(|(_, name)| *name)
        .collect();
    let known_bits = names.iter().fold(0, |acc, (flag, _)| acc | flag.0);
    let mut text = if known.is_empty() {
        "none".to_owned()
    } else {
        known.join(", ")
    };
    if caps.0 & !known_bits != 0 {
        let _ = write!(text, " (+ unknown {:#x})", caps.0 & !known_bits);
    }
    text
}

/// A link speed with its transfer rate (PCIe Base 6.0 §7.5.3.18).
pub fn speed(speed: LinkSpeed) -> &'static str {
    match speed {
        LinkSpeed::Gen1 => "2.5 GT/s",
        LinkSpeed::Gen2 => "5 GT/s",
        LinkSpeed::Gen3 => "8 GT/s",
        LinkSpeed::Gen4 => "16 GT/s",
        LinkSpeed::Gen5 => "32 GT/s",
        LinkSpeed::Gen6 => "64 GT/s",
    }
}

/// A link's state, speed and width, such as `up 16 GT/s x8`.
pub fn link(link: &LinkStatus) -> String {
    match link.state {
        LinkState::Up => match link.speed {
            Some(s) => format!("up {} x{}", speed(s), link.width),
            None => format!("up x{}", link.width),
        },
        LinkState::Down => "down".to_owned(),
        LinkState::Training => "training".to_owned(),
        LinkState::Disabled => "disabled".to_owned(),
    }
}

/// A port named across the fabric, such as `0x1/3`.
pub fn port_ref(port: &PortRef) -> String {
    format!("{}/{}", switch_id(port.switch), port.port.0)
}

/// A size in bytes with a binary unit, such as `16 MiB` or `1.5 GiB`.
pub fn bytes(value: u64) -> String {
    const UNITS: [&str; 7] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    let mut unit = 0;
    let mut scaled = value as f64;
    while scaled >= 1024.0 && unit + 1 < UNITS.len() {
        scaled /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{value} B")
    } else if scaled.fract() == 0.0 {
        format!("{scaled:.0} {}", UNITS[unit])
    } else {
        format!("{scaled:.1} {}", UNITS[unit])
    }
}

/// A duration in milliseconds with a fraction, such as `0.42 ms`.
pub fn millis(duration: Duration) -> String {
    format!("{:.2} ms", duration.as_secs_f64() * 1e3)
}

/// A class code as its base class's name and the raw value (PCI Code and ID
/// Assignment Specification §1).
pub fn class_code(class: ClassCode) -> String {
    let base = (class.0 >> 16) as u8;
    let sub = (class.0 >> 8) as u8;
    let name = match (base, sub) {
        (0x01, 0x08) => "NVMe",
        (0x01, _) => "storage",
        (0x02, _) => "network",
        (0x03, _) => "display",
        (0x04, _) => "multimedia",
        (0x06, _) => "bridge",
        (0x0b, _) => "processor",
        (0x0c, _) => "serial bus",
        (0x12, _) => "accelerator",
        _ => "other",
    };
    format!("{name} ({:06x})", class.0)
}

/// `n` things, in the singular or plural.
fn count(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// The whole topology as tables: switches, links, ports, endpoints.
pub fn topology(topology: &Topology) -> String {
    let mut out = format!(
        "generation {}: {}, {}, {}, {}\n",
        topology.generation.0,
        count(topology.switches.len(), "switch", "switches"),
        count(topology.links.len(), "link", "links"),
        count(topology.ports.len(), "port", "ports"),
        count(topology.endpoints.len(), "function", "functions")
    );
    if !topology.switches.is_empty() {
        let mut table = Table::new(&["SWITCH", "BOARD", "PORTS", "MANAGER"]).right(2);
        for s in &topology.switches {
            table.row(vec![
                switch_id(s.id),
                s.board.to_string(),
                s.ports.to_string(),
                if s.manager { "yes" } else { "" }.to_owned(),
            ]);
        }
        out.push('\n');
        out.push_str(&table.render());
    }
    if !topology.links.is_empty() {
        let mut table = Table::new(&["LINK", "", "STATE"]);
        for l in &topology.links {
            table.row(vec![port_ref(&l.a), port_ref(&l.b), link(&l.link)]);
        }
        out.push('\n');
        out.push_str(&table.render());
    }
    if !topology.ports.is_empty() {
        let mut table = Table::new(&["PORT", "ROLE", "LINK", "MAX"]);
        for p in &topology.ports {
            let role = match p.role {
                PortRole::Unused => "unused".to_owned(),
                PortRole::Host { host } => format!("host {}", host.0),
                PortRole::Endpoint => "endpoint".to_owned(),
                PortRole::Fabric => "fabric".to_owned(),
                PortRole::NotResponding => "not responding".to_owned(),
            };
            table.row(vec![
                port_ref(&p.at),
                role,
                link(&p.link),
                format!("{} x{}", speed(p.max_speed), p.max_width),
            ]);
        }
        out.push('\n');
        out.push_str(&table.render());
    }
    if !topology.endpoints.is_empty() {
        let mut table = Table::new(&[
            "FUNCTION", "PORT", "ID", "CLASS", "BARS", "SR-IOV", "BOUND TO",
        ]);
        for e in &topology.endpoints {
            let bars: Vec<String> = e
                .bars
                .iter()
                .map(|b| {
                    let kind = match b.kind {
                        BarKind::Io => "io",
                        BarKind::Memory32 => "m32",
                        BarKind::Memory64 => "m64",
                    };
                    let pf = if b.prefetchable { ",pf" } else { "" };
                    format!("{}:{} {kind}{pf}", b.index, bytes(b.size))
                })
                .collect();
            let sriov = match (&e.sriov, e.physical_function) {
                (Some(s), _) => format!("{}/{} VFs", s.num_vfs, s.total_vfs),
                (None, Some(pf)) => format!("VF of {}", show_fabric_id(pf)),
                (None, None) => String::new(),
            };
            let owner = e
                .owner
                .map(|o| format!("host {} slot {}", o.host.0, o.slot.0))
                .unwrap_or_default();
            table.row(vec![
                show_fabric_id(e.fabric_id),
                port_ref(&e.at),
                format!("{:04x}:{:04x}", e.vendor_id, e.device_id),
                class_code(e.class_code),
                bars.join(" "),
                sriov,
                owner,
            ]);
        }
        out.push('\n');
        out.push_str(&table.render());
    }
    out
}

/// The topology as a Graphviz graph: switches as boxes, fabric links
/// between them, functions hanging off their ports, and hosts joined to the
/// functions bound to them.
pub fn topology_dot(topology: &Topology) -> String {
    let mut out = String::from("graph weft {\n  node [fontname=\"monospace\"];\n");
    for s in &topology.switches {
        let _ = writeln!(
            out,
            "  \"sw{:x}\" [shape=box, label=\"{}\\n{}\"];",
            s.id.0,
            switch_id(s.id),
            s.board
        );
    }
    for l in &topology.links {
        let _ = writeln!(
            out,
            "  \"sw{:x}\" -- \"sw{:x}\" [label=\"{}-{} {}\"];",
            l.a.switch.0,
            l.b.switch.0,
            l.a.port.0,
            l.b.port.0,
            link(&l.link)
        );
    }
    for p in &topology.ports {
        if let PortRole::Host { host } = p.role {
            let _ = writeln!(
                out,
                "  \"host{}\" [shape=house, label=\"host {}\"];\n  \"host{}\" -- \"sw{:x}\" [label=\"port {} {}\"];",
                host.0,
                host.0,
                host.0,
                p.at.switch.0,
                p.at.port.0,
                link(&p.link)
            );
        }
    }
    for e in &topology.endpoints {
        let id = show_fabric_id(e.fabric_id);
        let _ = writeln!(
            out,
            "  \"fn{}\" [shape=ellipse, label=\"{id}\\n{}\"];\n  \"sw{:x}\" -- \"fn{}\" [label=\"port {}\"];",
            e.fabric_id.0,
            class_code(e.class_code),
            e.at.switch.0,
            e.fabric_id.0,
            e.at.port.0
        );
        if let Some(owner) = e.owner {
            let _ = writeln!(
                out,
                "  \"host{}\" -- \"fn{}\" [style=dashed, label=\"slot {}\"];",
                owner.host.0, e.fabric_id.0, owner.slot.0
            );
        }
    }
    out.push_str("}\n");
    out
}

/// One host's virtual switch: its upstream link and each slot.
pub fn virtual_switch(info: &VirtualSwitchInfo) -> String {
    let mut out = format!(
        "host {}: upstream {}, generation {}\n\n",
        info.host.0,
        link(&info.upstream),
        info.generation.0
    );
    let mut table = Table::new(&["SLOT", "STATE", "FUNCTIONS"]).right(0);
    for slot in &info.slots {
        let (state, functions) = match &slot.state {
            SlotState::Empty => ("empty".to_owned(), None),
            SlotState::Binding { functions } => ("binding".to_owned(), Some(functions)),
            SlotState::Bound { functions } => ("bound".to_owned(), Some(functions)),
            SlotState::Unbinding { functions, mode } => (
                format!("unbinding ({})", format!("{mode:?}").to_lowercase()),
                Some(functions),
            ),
        };
        let functions = functions
            .map(|f| {
                f.iter()
                    .map(|id| show_fabric_id(*id))
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .unwrap_or_default();
        table.row(vec![slot.slot.0.to_string(), state, functions]);
    }
    out.push_str(&table.render());
    out
}

/// A counter's name, in words.
pub fn counter_name(kind: CounterKind) -> &'static str {
    match kind {
        CounterKind::RxTlps => "rx TLPs",
        CounterKind::TxTlps => "tx TLPs",
        CounterKind::RxPayloadBytes => "rx payload",
        CounterKind::TxPayloadBytes => "tx payload",
        CounterKind::RxPosted => "rx posted requests",
        CounterKind::RxNonPosted => "rx non-posted requests",
        CounterKind::RxCompletions => "rx completions",
        CounterKind::DroppedNoRoute => "dropped: no route",
        CounterKind::DroppedIsolation => "dropped: isolation",
        CounterKind::DroppedMalformed => "dropped: malformed",
        CounterKind::DroppedPoisoned => "dropped: poisoned",
        CounterKind::UnsupportedRequests => "unsupported requests",
        CounterKind::CompletionTimeouts => "completion timeouts",
        CounterKind::SynthesizedCompletions => "synthesized completions",
        CounterKind::CreditStallCycles => "credit stall cycles",
        CounterKind::LinkDowns => "link downs",
        CounterKind::TxPosted => "tx posted requests",
        CounterKind::TxNonPosted => "tx non-posted requests",
        CounterKind::TxCompletions => "tx completions",
        CounterKind::RxWireBytes => "rx bytes (wire)",
        CounterKind::TxWireBytes => "tx bytes (wire)",
        CounterKind::DroppedPortDisabled => "dropped: port disabled",
        CounterKind::DroppedUnsupportedType => "dropped: unsupported type",
        CounterKind::DroppedRoutesToIngress => "dropped: routes back to ingress",
        CounterKind::DroppedUnexpectedCompletion => "dropped: unexpected completion",
        CounterKind::DroppedUnknownFunction => "dropped: unknown function",
        CounterKind::DroppedUnbound => "dropped: isolation, unbound",
        CounterKind::DroppedSpoofedRequester => "dropped: isolation, spoofed requester",
        CounterKind::DroppedNoWindow => "dropped: isolation, no window",
        CounterKind::DroppedForbidden => "dropped: isolation, forbidden",
        CounterKind::DroppedOutsideAperture => "dropped: isolation, outside aperture",
    }
}

/// A port's counters as a table, byte counters with a unit.
pub fn counters(counters: &PortCounters) -> String {
    let mut table = Table::new(&["COUNTER", "VALUE", ""]).right(1);
    for c in &counters.values {
        let unit = match c.kind {
            CounterKind::RxPayloadBytes
            | CounterKind::TxPayloadBytes
            | CounterKind::RxWireBytes
            | CounterKind::TxWireBytes => bytes(c.value),
            _ => String::new(),
        };
        table.row(vec![
            counter_name(c.kind).to_owned(),
            c.value.to_string(),
            unit,
        ]);
    }
    format!("port {}\n{}", counters.port.0, table.render())
}

/// Per-port throughput as a table: TLPs, payload and wire bytes per second, and drops.
pub fn rates(rates: &[PortRates]) -> String {
    let mut table = Table::new(&[
        "PORT", "RX TLP/s", "TX TLP/s", "RX", "TX", "RX WIRE", "TX WIRE", "DROPS/s",
    ]);
    for column in 0..8 {
        table = table.right(column);
    }
    for r in rates {
        table.row(vec![
            r.port.0.to_string(),
            format!("{:.0}", r.rx_tlps),
            format!("{:.0}", r.tx_tlps),
            format!("{}/s", bytes(r.rx_bytes as u64)),
            format!("{}/s", bytes(r.tx_bytes as u64)),
            format!("{}/s", bytes(r.rx_wire_bytes as u64)),
            format!("{}/s", bytes(r.tx_wire_bytes as u64)),
            format!("{:.0}", r.dropped),
        ]);
    }
    table.render()
}

/// What an event-log entry says, in words.
pub fn event_kind(kind: &EventKind) -> String {
    match kind {
        EventKind::Booted { reason } => format!("firmware started ({reason:?})"),
        EventKind::HostLinkUp { host } => format!("host {} link up", host.0),
        EventKind::HostLinkDown { host } => format!("host {} link down", host.0),
        EventKind::FabricLinkUp { port } => format!("fabric link on port {} up", port.0),
        EventKind::FabricLinkDown { port } => format!("fabric link on port {} down", port.0),
        EventKind::EndpointAdded { fabric_id } => {
            format!("function {} added", show_fabric_id(*fabric_id))
        }
        EventKind::EndpointRemoved { fabric_id } => {
            format!("function {} removed", show_fabric_id(*fabric_id))
        }
        EventKind::Bound {
            host,
            slot,
            fabric_id,
        } => format!(
            "function {} bound to host {} slot {}",
            show_fabric_id(*fabric_id),
            host.0,
            slot.0
        ),
        EventKind::Unbound {
            host,
            slot,
            fabric_id,
            mode,
        } => format!(
            "function {} unbound from host {} slot {} ({})",
            show_fabric_id(*fabric_id),
            host.0,
            slot.0,
            format!("{mode:?}").to_lowercase()
        ),
        EventKind::Aer {
            fabric_id,
            severity,
            status,
        } => format!(
            "AER {severity:?} from {} (status {status:#010x})",
            show_fabric_id(*fabric_id)
        ),
        EventKind::NumVfsChanged { fabric_id, num_vfs } => format!(
            "function {} now has {num_vfs} VFs",
            show_fabric_id(*fabric_id)
        ),
        EventKind::ConfigSaved => "configuration saved".to_owned(),
        EventKind::ConfigRestored => "configuration restored".to_owned(),
        EventKind::FirmwareStaged => "firmware image verified and staged".to_owned(),
        EventKind::FirmwareCommitted => "firmware image committed".to_owned(),
        EventKind::PortLinkUp { at } => format!("port {} link up", port_ref(at)),
        EventKind::PortLinkDown { at } => format!("port {} link down", port_ref(at)),
        EventKind::HotPlugSignalled {
            host,
            slot,
            present,
        } => format!(
            "hot-plug interrupt to host {} slot {}: device {}",
            host.0,
            slot.0,
            if *present { "present" } else { "gone" }
        ),
        EventKind::BindingNotRestored {
            host,
            slot,
            fabric_id,
            reason,
        } => format!(
            "saved binding of {} to host {} slot {} not restored: {}",
            show_fabric_id(*fabric_id),
            host.0,
            slot.0,
            match reason {
                RestoreFailure::FunctionGone => "the function is gone",
                RestoreFailure::Refused => "the bind was refused",
            }
        ),
        EventKind::IsolationDrops { at, check, count } => format!(
            "{count} TLPs dropped at port {}: {}",
            port_ref(at),
            match check {
                IsolationCheck::Unbound => "from a function bound to no host",
                IsolationCheck::SpoofedRequester => "requester ID not below the port",
                IsolationCheck::NoWindow => "address in none of the host's windows",
                IsolationCheck::Forbidden => "window does not permit the request",
                IsolationCheck::OutsideAperture => "DMA outside the owner's aperture",
            }
        ),
        EventKind::PortControlled { port, action } => format!(
            "port {}: {}",
            port.0,
            match action {
                PortAction::Enable => "enabled",
                PortAction::Disable => "disabled",
                PortAction::HotReset => "hot reset sent",
                PortAction::Retrain => "link retrained",
            }
        ),
        EventKind::FirmwareCheckedIn { slot } => {
            format!("firmware in slot {slot:?} checked in on trial; it boots from now on")
        }
        EventKind::PortNotResponding { at } => format!(
            "port {}: device not responding (its configuration requests timed out during enumeration)",
            port_ref(at)
        ),
        EventKind::DeviceNotResponding { at, fabric_id } => format!(
            "port {}: device {} below a conventional switch not responding (left out; \
             its configuration requests timed out during enumeration)",
            port_ref(at),
            show_fabric_id(*fabric_id)
        ),
    }
}

/// The header line above [`event_line`]s.
pub fn events_header() -> String {
    format!("{:>8}  {:>12}  EVENT\n", "SEQ", "TIME")
}

/// One event-log entry on one line: sequence number, time since the
/// firmware started, and what happened.
pub fn event_line(event: &Event) -> String {
    format!(
        "{:>8}  {:>12}  {}\n",
        event.seq.0,
        format!("{}.{:03} s", event.time_ms / 1000, event.time_ms % 1000),
        event_kind(&event.kind)
    )
}

/// Event-log entries under a header, one a line.
pub fn events(events: &[Event]) -> String {
    let mut out = events_header();
    for e in events {
        out.push_str(&event_line(e));
    }
    out
}

/// The firmware partitions and update state.
pub fn firmware_status(status: &FirmwareStatus) -> String {
    let state = match &status.state {
        UpdateState::Idle => "idle".to_owned(),
        UpdateState::Receiving => format!(
            "receiving: {} of {} ({}%)",
            bytes(u64::from(status.received)),
            bytes(u64::from(status.size)),
            percent(status.received, status.size)
        ),
        UpdateState::Verified => format!(
            "verified, {}, ready to commit",
            bytes(u64::from(status.size))
        ),
        UpdateState::CommitArmed => "commit armed, waiting for its trigger".to_owned(),
        UpdateState::Trial => "new image on trial, not yet checked in".to_owned(),
        UpdateState::Failed { reason } => format!("failed: {reason}"),
    };
    format!(
        "update      {state}\nrunning     partition {:?}\nnext boot   partition {:?}\n",
        status.running, status.next_boot
    )
}

fn percent(part: u32, whole: u32) -> u64 {
    (u64::from(part) * 100)
        .checked_div(u64::from(whole))
        .unwrap_or(0)
}

/// A background operation's state.
pub fn operation(report: &OperationReport) -> String {
    match &report.state {
        OperationState::Running { percent } => {
            format!("operation {}: running, {percent}% done\n", report.op.0)
        }
        OperationState::Succeeded => format!("operation {}: succeeded\n", report.op.0),
        OperationState::Failed { reason } => {
            format!("operation {}: failed: {reason}\n", report.op.0)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_use_binary_units() {
        assert_eq!(bytes(512), "512 B");
        assert_eq!(bytes(16 << 20), "16 MiB");
        assert_eq!(bytes(1536 << 20), "1.5 GiB");
    }

    #[test]
    fn links_show_state_speed_and_width() {
        let up = LinkStatus {
            state: LinkState::Up,
            speed: Some(LinkSpeed::Gen4),
            width: 8,
        };
        assert_eq!(link(&up), "up 16 GT/s x8");
        let down = LinkStatus {
            state: LinkState::Down,
            speed: None,
            width: 0,
        };
        assert_eq!(link(&down), "down");
    }

    #[test]
    fn class_codes_name_their_base_class() {
        // PCI Code and ID Assignment: 01/08/02 is an NVMe controller, 03/02
        // a 3D controller.
        assert_eq!(class_code(ClassCode(0x010802)), "NVMe (010802)");
        assert_eq!(class_code(ClassCode(0x030200)), "display (030200)");
    }

    #[test]
    fn capabilities_are_listed_by_name() {
        let caps = Capabilities::BIND.union(Capabilities::AUTHENTICATED);
        assert_eq!(capabilities(caps), "bind, authenticated");
        assert_eq!(
            capabilities(Capabilities(1 << 31)),
            "none (+ unknown 0x80000000)"
        );
    }
}
