//! A PCIe link in simulated time: bandwidth, latency and credit-based flow control.
//!
//! Each direction of a link is modelled on its own:
//!
//! - **Bandwidth.** A TLP occupies the wire for its bytes on the wire — the
//!   framing, sequence number and LCRC of the link's encoding
//!   (`weft_pcie::link::Encoding::tlp_framing_bytes`) plus prefixes, header,
//!   payload and digest — divided by the link's rate after line encoding
//!   (`Link::raw_bytes_per_sec`), stretched by
//!   `weft_pcie::link::DLLP_SKP_OVERHEAD` for the Ack/UpdateFC DLLPs and
//!   SKP ordered sets that share the wire. TLPs leave back to back: one starts
//!   when the previous has left.
//! - **Latency.** A fixed time from the last byte leaving to the TLP being
//!   delivered: PHY, data link layer and flight time together.
//! - **Flow control** (PCIe Base 6.0 §2.6.1). The receiver advertises header
//!   and data credits for posted requests, non-posted requests and
//!   completions; a TLP costs one header credit of its class and one data
//!   credit per 4 DW of payload, and may only be sent while the credits it
//!   needs are available. Credits come back when the receiver frees its
//!   buffer, one link latency later (the UpdateFC DLLP's trip). A switch
//!   port advertises [`Credits::SWITCH_PORT`] (its ingress buffer), an
//!   endpoint or root port [`Credits::ENDPOINT`] (infinite completions).

use std::collections::VecDeque;

use weft_model::Packet;
use weft_pcie::link::{Link, DLLP_SKP_OVERHEAD};
use weft_pcie::tlp::FlowControlClass;
use weft_regs::capacity::INGRESS_TLP_SLOTS;

/// Picoseconds, the simulator's unit of time.
pub type Picoseconds = u64;

/// Picoseconds in a second.
const PS_PER_SECOND: f64 = 1e12;

/// Bytes of payload one data credit covers: 4 DW (§2.6.1).
pub const DATA_CREDIT_BYTES: usize = 16;

/// The credits a receiver advertises for one class; `None` is infinite (advertised as 0, §2.6.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClassCredits {
    /// Header credits: one per TLP.
    pub header: Option<u32>,
    /// Data credits: one per 4 DW of payload.
    pub data: Option<u32>,
}

/// The credits a receiver advertises, per class.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Credits {
    /// Posted requests.
    pub posted: ClassCredits,
    /// Non-posted requests.
    pub non_posted: ClassCredits,
    /// Completions.
    pub completion: ClassCredits,
}

impl Credits {
    /// Infinite credits of every class: a receiver that never pushes back.
    pub const INFINITE: Credits = Credits {
        posted: ClassCredits {
            header: None,
            data: None,
        },
        non_posted: ClassCredits {
            header: None,
            data: None,
        },
        completion: ClassCredits {
            header: None,
            data: None,
        },
    };

    /// What a weft switch port's receiver advertises: per class, as many
    /// headers as the switching core's ingress buffer holds TLPs
    /// (`weft_regs::capacity::INGRESS_TLP_SLOTS`) and data for as many
    /// 256-byte payloads (the Max_Payload_Size the fabric runs at).
    pub const SWITCH_PORT: Credits = {
        let class = ClassCredits {
            header: Some(INGRESS_TLP_SLOTS as u32),
            data: Some((INGRESS_TLP_SLOTS * 256 / DATA_CREDIT_BYTES) as u32),
        };
        Credits {
            posted: class,
            non_posted: class,
            completion: class,
        }
    };

    /// What an endpoint or a root port advertises: the switch port's
    /// request credits, and infinite completion credits, as §2.6.1 requires
    /// of a Root Complex and Endpoints (they sink every completion of the
    /// requests they issued).
    pub const ENDPOINT: Credits = Credits {
        completion: ClassCredits {
            header: None,
            data: None,
        },
        ..Credits::SWITCH_PORT
    };

    /// Whether a TLP costing `cost` can ever be sent against these credits
    /// (a receiver must advertise room for the largest TLP, §2.6.1).
    pub fn covers(&self, cost: CreditCost) -> bool {
        let class = match cost.class {
            FlowControlClass::Posted => self.posted,
            FlowControlClass::NonPosted => self.non_posted,
            FlowControlClass::Completion => self.completion,
        };
        class.header.is_none_or(|h| h >= 1) && class.data.is_none_or(|d| d >= cost.data)
    }

    fn class_mut(&mut self, class: FlowControlClass) -> &mut ClassCredits {
        match class {
            FlowControlClass::Posted => &mut self.posted,
            FlowControlClass::NonPosted => &mut self.non_posted,
            FlowControlClass::Completion => &mut self.completion,
        }
    }
}

/// What one TLP costs in credits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CreditCost {
    /// The class whose credits it uses.
    pub class: FlowControlClass,
    /// Data credits: payload bytes in 4 DW units, rounded up.
    pub data: u32,
}

impl CreditCost {
    /// The cost of `packet` (one header credit is implied).
    pub fn of(packet: &Packet) -> Self {
        let data = packet.payload.len().div_ceil(DATA_CREDIT_BYTES);
        CreditCost {
            class: packet.header.flow_control_class(),
            data: u32::try_from(data).expect("a TLP payload is at most 4 KiB"),
        }
    }
}

/// A link direction's shape: its rate, width and latency.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LinkConfig {
    /// Speed and width.
    pub link: Link,
    /// From the last byte sent to delivery.
    pub latency_ps: Picoseconds,
}

/// Why a TLP could not be sent now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SendError {
    /// The receiver has not advertised enough credits of this class yet.
    NoCredit(CreditCost),
}

/// One direction of a link.
#[derive(Clone, Debug)]
pub struct LinkDirection {
    config: LinkConfig,
    advertised: Credits,
    available: Credits,
    wire_free_at: Picoseconds,
    credit_returns: VecDeque<(Picoseconds, CreditCost)>,
}

impl LinkDirection {
    /// Its rate, width and latency.
    pub fn config(&self) -> LinkConfig {
        self.config
    }

    /// A direction whose receiver advertises `credits`.
    pub fn new(config: LinkConfig, credits: Credits) -> Self {
        LinkDirection {
            config,
            advertised: credits,
            available: credits,
            wire_free_at: 0,
            credit_returns: VecDeque::new(),
        }
    }

    /// The credits the receiver advertised.
    pub fn advertised(&self) -> Credits {
        self.advertised
    }

    /// The earliest time from `now` at which the credits returned by then
    /// cover `packet`, counting returns already on their way; `None` if
    /// they never do without more returns.
    pub fn credited_at(&self, now: Picoseconds, packet: &Packet) -> Option<Picoseconds> {
        let cost = CreditCost::of(packet);
        let mut available = self.available;
        let fits = |credits: &mut Credits| {
            let class = credits.class_mut(cost.class);
            class.header.is_none_or(|h| h >= 1) && class.data.is_none_or(|d| d >= cost.data)
        };
        if fits(&mut available) {
            return Some(now);
        }
        for (at, returned) in &self.credit_returns {
            let class = available.class_mut(returned.class);
            if let Some(header) = class.header.as_mut() {
                *header += 1;
            }
            if let Some(data) = class.data.as_mut() {
                *data += returned.data;
            }
            if fits(&mut available) {
                return Some(now.max(*at));
            }
        }
        None
    }

    /// How long `packet` occupies the wire.
    pub fn serialization_ps(&self, packet: &Packet) -> Picoseconds {
        let encoding = self.config.link.speed.encoding();
        let wire_bytes = encoding.tlp_framing_bytes() as f64 + packet.wire_len() as f64;
        let seconds = wire_bytes * (1.0 + DLLP_SKP_OVERHEAD) / self.config.link.raw_bytes_per_sec();
        (seconds * PS_PER_SECOND).round() as Picoseconds
    }

    /// Whether the receiver's credits allow `packet` now (after credits returned by `now`).
    pub fn can_send(&mut self, now: Picoseconds, packet: &Packet) -> bool {
        self.collect_credits(now);
        let cost = CreditCost::of(packet);
        let credits = self.available.class_mut(cost.class);
        credits.header.is_none_or(|h| h >= 1) && credits.data.is_none_or(|d| d >= cost.data)
    }

    /// Keeps the wire idle until `until`: the link is retraining or being
    /// reset, and sends nothing before it is back. Credits carry on.
    pub fn hold_until(&mut self, until: Picoseconds) {
        self.wire_free_at = self.wire_free_at.max(until);
    }

    /// Puts `packet` on the wire at `now` (or when the wire frees) and
    /// returns when it is delivered. The caller carries the packet to its
    /// destination; the link only paces the wire and keeps the credits.
    pub fn send(&mut self, now: Picoseconds, packet: &Packet) -> Result<Picoseconds, SendError> {
        if !self.can_send(now, packet) {
            return Err(SendError::NoCredit(CreditCost::of(packet)));
        }
        let cost = CreditCost::of(packet);
        let credits = self.available.class_mut(cost.class);
        if let Some(header) = credits.header.as_mut() {
            *header -= 1;
        }
        if let Some(data) = credits.data.as_mut() {
            *data -= cost.data;
        }
        let start = now.max(self.wire_free_at);
        self.wire_free_at = start + self.serialization_ps(packet);
        Ok(self.wire_free_at + self.config.latency_ps)
    }

    /// Puts `packet` on the wire as soon as the credits on their way allow
    /// (from `now`), taking what credits there are: for a sender that
    /// cannot wait, like the management CPU's synchronous configuration
    /// path, which runs while nothing else moves. Returns the delivery time.
    pub fn send_when_credited(&mut self, now: Picoseconds, packet: &Packet) -> Picoseconds {
        let start = self.credited_at(now, packet).unwrap_or(now);
        self.collect_credits(start);
        let cost = CreditCost::of(packet);
        let credits = self.available.class_mut(cost.class);
        if let Some(header) = credits.header.as_mut() {
            *header = header.saturating_sub(1);
        }
        if let Some(data) = credits.data.as_mut() {
            *data = data.saturating_sub(cost.data);
        }
        let start = start.max(self.wire_free_at);
        self.wire_free_at = start + self.serialization_ps(packet);
        self.wire_free_at + self.config.latency_ps
    }

    /// The receiver freed the buffer of a TLP that cost `cost` at `now`;
    /// the sender sees the credits one latency later (UpdateFC, §2.6.1.2).
    pub fn release(&mut self, now: Picoseconds, cost: CreditCost) {
        self.credit_returns
            .push_back((now + self.config.latency_ps, cost));
    }

    fn collect_credits(&mut self, now: Picoseconds) {
        while self
            .credit_returns
            .front()
            .is_some_and(|(at, _)| *at <= now)
        {
            let (_, cost) = self.credit_returns.pop_front().expect("checked just above");
            let limit = *self.advertised.class_mut(cost.class);
            let credits = self.available.class_mut(cost.class);
            if let (Some(header), Some(most)) = (credits.header.as_mut(), limit.header) {
                *header = (*header + 1).min(most);
            }
            if let (Some(data), Some(most)) = (credits.data.as_mut(), limit.data) {
                *data = (*data + cost.data).min(most);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use weft_pcie::link::{LinkSpeed, LinkWidth};
    use weft_pcie::tlp::{
        AddressType, Attributes, Body, Header, MemoryOp, MemoryRequest, Tag, TrafficClass,
    };
    use weft_pcie::Bdf;

    use super::*;

    fn write(payload_bytes: usize) -> Packet {
        let request = MemoryRequest {
            op: MemoryOp::Write,
            traffic_class: TrafficClass::default(),
            attributes: Attributes::default(),
            address_type: AddressType::default(),
            requester: Bdf::new(1, 0, 0),
            tag: Tag::default(),
            address: 0x1_0000_0000,
            length_dw: u16::try_from(payload_bytes / 4).expect("small"),
            first_be: 0xf,
            last_be: 0xf,
            processing_hint: None,
        };
        let header = Header {
            digest_present: false,
            poisoned: false,
            body: Body::Memory(request),
        };
        Packet::new(header, vec![0; payload_bytes])
    }

    fn gen3_x16(latency_ps: Picoseconds) -> LinkConfig {
        LinkConfig {
            link: Link::new(LinkSpeed::Gen3, LinkWidth::X16),
            latency_ps,
        }
    }

    #[test]
    fn back_to_back_writes_run_at_the_link_rate() {
        let mut link = LinkDirection::new(gen3_x16(0), Credits::INFINITE);
        let mut last = 0;
        for _ in 0..1000 {
            last = link.send(0, &write(256)).expect("infinite credits");
        }
        // Gen3 x16: 8 GT/s x 16 lanes x 128/130 / 8 = 15.754 GB/s. A 256-byte
        // 64-bit write is 8 (framing + LCRC) + 16 (header) + 256 = 280 bytes,
        // times 1.01 for DLLPs and SKPs: 17.95 ns each, 17.95 µs for 1000.
        let expected_ps = 1000.0 * 280.0 * 1.01 / (8e9 * 16.0 * 128.0 / 130.0 / 8.0) * 1e12;
        assert!(
            (last as f64 - expected_ps).abs() < 1000.0,
            "{last} ps vs {expected_ps} ps"
        );
    }

    #[test]
    fn latency_is_added_after_the_last_byte() {
        let mut link = LinkDirection::new(gen3_x16(100_000), Credits::INFINITE);
        let packet = write(64);
        let on_wire = link.serialization_ps(&packet);
        assert_eq!(
            link.send(5_000, &packet).expect("infinite credits"),
            5_000 + on_wire + 100_000
        );
        // A second TLP offered at the same time waits for the wire, then
        // takes the same latency.
        assert_eq!(
            link.send(5_000, &packet).expect("infinite credits"),
            5_000 + 2 * on_wire + 100_000
        );
    }

    #[test]
    fn a_held_link_sends_from_when_it_is_back_with_its_credits_kept() {
        let credits = Credits {
            posted: ClassCredits {
                header: Some(1),
                data: None,
            },
            ..Credits::INFINITE
        };
        let mut link = LinkDirection::new(gen3_x16(100_000), credits);
        let packet = write(64);
        let on_wire = link.serialization_ps(&packet);
        // Retraining until 2 µs: a TLP offered at 1 µs leaves when it is back.
        link.hold_until(2_000_000);
        assert_eq!(
            link.send(1_000_000, &packet).expect("one header credit"),
            2_000_000 + on_wire + 100_000
        );
        // The credit it took is still taken: Recovery keeps the FC state (§3.4).
        assert!(!link.can_send(3_000_000, &packet));
    }

    #[test]
    fn credits_hold_back_a_class_until_returned() {
        let credits = Credits {
            posted: ClassCredits {
                header: Some(2),
                data: Some(32),
            },
            ..Credits::INFINITE
        };
        let mut link = LinkDirection::new(gen3_x16(1_000), credits);
        // Each 256-byte write costs 1 header credit and 256 / 16 = 16 data credits.
        link.send(0, &write(256)).expect("credits for the first");
        link.send(0, &write(256)).expect("credits for the second");
        assert_eq!(
            link.send(0, &write(256)),
            Err(SendError::NoCredit(CreditCost {
                class: FlowControlClass::Posted,
                data: 16
            }))
        );
        // The receiver frees one at t = 10 ns; the sender sees it a latency later.
        link.release(
            10_000,
            CreditCost {
                class: FlowControlClass::Posted,
                data: 16,
            },
        );
        assert!(!link.can_send(10_999, &write(256)));
        assert!(link.can_send(11_000, &write(256)));
    }

    #[test]
    fn credited_at_counts_the_returns_on_their_way() {
        let one_write = Credits {
            posted: ClassCredits {
                header: Some(1),
                data: Some(16),
            },
            ..Credits::INFINITE
        };
        let mut link = LinkDirection::new(gen3_x16(1_000), one_write);
        link.send(0, &write(256)).expect("credits for one");
        assert_eq!(link.credited_at(0, &write(256)), None, "nothing on its way");
        link.release(5_000, CreditCost::of(&write(256)));
        // Back one latency after the receiver freed it.
        assert_eq!(link.credited_at(0, &write(256)), Some(6_000));
        // Returns never raise credits above what was advertised.
        link.release(5_000, CreditCost::of(&write(256)));
        assert!(link.can_send(7_000, &write(256)));
        link.send(7_000, &write(256)).expect("the one credit");
        assert!(!link.can_send(7_000, &write(256)));
    }
}
