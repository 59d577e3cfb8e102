//! The event log: a bounded ring of what happened in the fabric, each
//! event numbered in order, read from a sequence number on.
//!
//! The ring keeps the newest [`EVENT_LOG_CAPACITY`] events; a reader that
//! falls behind is told how many it missed rather than given a gap it
//! cannot see.

use core::iter::Chain;
use core::slice;

use heapless::Deque;
use weft_pcie::Bdf;
use weft_proto::ImageSlot;
use weft_regs::csr::counter;
use weft_regs::tables::{HostIndex, PortIndex};

use crate::binding::UnbindMode;
use crate::generation::Generation;
use crate::inventory::{Binding, SwitchIndex};
pub use crate::limits::EVENT_LOG_CAPACITY;
use crate::manager::FabricManager;

/// The severity of an error message a function sent (PCIe Base 6.0 §6.2.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorSeverity {
    /// ERR_COR: corrected by hardware.
    Correctable,
    /// ERR_NONFATAL: uncorrectable, the link still works.
    NonFatal,
    /// ERR_FATAL: uncorrectable, the link or the device is unreliable.
    Fatal,
}

impl ErrorSeverity {
    /// The severity of an error signaling message by its Message Code
    /// (§2.2.8.3: ERR_COR 0x30, ERR_NONFATAL 0x31, ERR_FATAL 0x33).
    pub const fn from_message_code(code: u8) -> Option<Self> {
        match code {
            0x30 => Some(ErrorSeverity::Correctable),
            0x31 => Some(ErrorSeverity::NonFatal),
            0x33 => Some(ErrorSeverity::Fatal),
            _ => None,
        }
    }
}

/// The isolation checks of the data plane whose drops are logged: the
/// ones that stop a TLP from reaching what its sender does not own.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IsolationCheck {
    /// A request from an endpoint bound to no host (`DROP_UNBOUND`).
    Unbound,
    /// A requester ID not below the port (`DROP_SPOOFED_REQUESTER`).
    SpoofedRequester,
    /// A host memory request inside none of the host's windows (`DROP_NO_WINDOW`).
    NoWindow,
    /// A window covers the request but does not permit it (`DROP_FORBIDDEN`).
    Forbidden,
    /// An endpoint's DMA address outside its owner's aperture (`DROP_OUTSIDE_APERTURE`).
    OutsideAperture,
}

impl IsolationCheck {
    /// The check counted by entry `entry` of a port's counters
    /// (`weft_regs::csr::counter`), if that entry counts isolation drops.
    pub fn from_counter_entry(entry: u32) -> Option<Self> {
        let name = counter::NAMES.get(usize::try_from(entry).ok()?)?.name;
        match name {
            "DROP_UNBOUND" => Some(IsolationCheck::Unbound),
            "DROP_SPOOFED_REQUESTER" => Some(IsolationCheck::SpoofedRequester),
            "DROP_NO_WINDOW" => Some(IsolationCheck::NoWindow),
            "DROP_FORBIDDEN" => Some(IsolationCheck::Forbidden),
            "DROP_OUTSIDE_APERTURE" => Some(IsolationCheck::OutsideAperture),
            _ => None,
        }
    }
}

/// Why a stored binding was not restored at boot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NotRestored {
    /// No function with its fabric ID, vendor and device ID was found.
    FunctionGone,
    /// The function is there but the bind was refused or failed
    /// (the host or slot no longer exists, the slot or port is taken, a
    /// table write failed).
    Refused,
}

/// Something that happened in the fabric.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// A port's link came up.
    LinkUp {
        /// The switch.
        switch: SwitchIndex,
        /// The port.
        port: PortIndex,
    },
    /// A port's link went down.
    LinkDown {
        /// The switch.
        switch: SwitchIndex,
        /// The port.
        port: PortIndex,
    },
    /// Enumeration found a function that was not there before.
    DeviceAdded {
        /// Its fabric ID.
        function: Bdf,
        /// The switch it is below.
        switch: SwitchIndex,
        /// The port it is below.
        port: PortIndex,
    },
    /// Enumeration found the device on a port not responding: it took a
    /// configuration request of the manager and never completed it (PCIe
    /// Base 6.0 §2.8), or never became ready (§6.6.1), so the port was left empty
    /// ([`crate::inventory::FabricSwitch::not_responding`]). Logged when an
    /// enumeration finds it so and the one before did not.
    NotResponding {
        /// The switch.
        switch: SwitchIndex,
        /// The port.
        port: PortIndex,
    },
    /// Enumeration found the device on a conventional switch's downstream
    /// port not responding (as [`Event::NotResponding`]): it alone was
    /// released, the weft port and the device's siblings stay in use
    /// ([`crate::inventory::Bridge::device_not_responding`]). Logged when
    /// an enumeration finds it so and the one before did not.
    DeviceNotResponding {
        /// Its fabric ID, function 0 on the downstream port's link.
        device: Bdf,
        /// The switch it is below.
        switch: SwitchIndex,
        /// The port it is below.
        port: PortIndex,
    },
    /// Enumeration no longer found a function that was there before.
    DeviceRemoved {
        /// Its fabric ID.
        function: Bdf,
        /// The switch it was below.
        switch: SwitchIndex,
        /// The port it was below.
        port: PortIndex,
    },
    /// A function was bound to a host's slot.
    Bound {
        /// Its fabric ID.
        function: Bdf,
        /// Where.
        binding: Binding,
        /// The binding state's generation after the change.
        generation: Generation,
    },
    /// A function was unbound from a host's slot.
    Unbound {
        /// Its fabric ID.
        function: Bdf,
        /// Where it was.
        binding: Binding,
        /// How.
        mode: UnbindMode,
        /// The binding state's generation after the change.
        generation: Generation,
    },
    /// A stored binding could not be restored at boot.
    BindingNotRestored {
        /// The stored function's fabric ID.
        function: Bdf,
        /// Where it was bound.
        binding: Binding,
        /// Why it was not restored.
        reason: NotRestored,
    },
    /// A hot-plug MSI was sent to a host for a change in one of its slots.
    HotPlugSent {
        /// The host.
        host: HostIndex,
        /// The slot.
        slot: u8,
        /// Whether the slot now shows presence.
        present: bool,
    },
    /// The data plane dropped TLPs that would have crossed an isolation boundary.
    IsolationDrops {
        /// The switch.
        switch: SwitchIndex,
        /// The ingress port.
        port: PortIndex,
        /// Which check dropped them.
        check: IsolationCheck,
        /// How many, since the last time they were recorded.
        count: u32,
    },
    /// A management request enabled or disabled a port of the manager's
    /// own switch ([`crate::port_control`]).
    PortControlled {
        /// The port.
        port: PortIndex,
        /// Whether it is enabled now.
        enabled: bool,
    },
    /// A management request hot reset or retrained the link of a port of
    /// the manager's own switch ([`crate::link_control`]).
    LinkControlled {
        /// The port.
        port: PortIndex,
        /// What the link was asked to do.
        request: weft_regs::tables::LinkRequest,
    },
    /// A function sent an error message (ERR_COR, ERR_NONFATAL, ERR_FATAL)
    /// that the switch forwarded to the management CPU.
    ErrorMessage {
        /// The message's requester ID: the function that signalled it.
        requester: Bdf,
        /// Its severity.
        severity: ErrorSeverity,
        /// Where that function was bound when it was received.
        binding: Option<Binding>,
    },
    /// A PF's NumVFs changed at run time (`crate::sriov`).
    NumVfsChanged {
        /// The PF.
        pf: Bdf,
        /// Its NumVFs now.
        num_vfs: u16,
    },
    /// The configuration was saved to flash ([`crate::persist`]).
    ConfigSaved,
    /// The configuration saved in flash was applied on request.
    ConfigRestored,
    /// A new firmware image was written whole and its SHA-256 checked
    /// ([`crate::firmware_update`]).
    FirmwareStaged,
    /// The staged image was committed: the next start runs it on trial.
    FirmwareCommitted,
    /// This start runs a committed image on trial.
    FirmwareTrialStarted {
        /// The slot it runs from.
        slot: ImageSlot,
    },
    /// The image on trial checked in: it is the good image from now on.
    FirmwareCheckedIn {
        /// The slot it runs from.
        slot: ImageSlot,
    },
    /// This start runs the good image again: the trial never checked in.
    FirmwareBootedBack {
        /// The good image's slot.
        slot: ImageSlot,
    },
}

/// An event with its sequence number and time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Logged {
    /// Its place in the order of all events ever recorded, from 0.
    pub sequence: u32,
    /// The log's clock when it was recorded ([`EventLog::set_time`]), in
    /// nanoseconds of the manager's timer (`hw::Timer::now_ns`).
    pub time_ns: u64,
    /// What happened.
    pub event: Event,
}

/// The events held from some sequence number on.
pub struct Since<'a> {
    /// Events at or after the sequence number asked for that were
    /// overwritten before they were read.
    pub overwritten: u32,
    /// The sequence number to read from next time.
    pub next: u32,
    entries: Chain<slice::Iter<'a, Logged>, slice::Iter<'a, Logged>>,
    from: u32,
}

impl<'a> Iterator for Since<'a> {
    type Item = &'a Logged;

    fn next(&mut self) -> Option<&'a Logged> {
        self.entries.by_ref().find(|e| after(e.sequence, self.from))
    }
}

/// Whether sequence number `a` is at or after `b`, across wrapping.
fn after(a: u32, b: u32) -> bool {
    a.wrapping_sub(b) < 1 << 31
}

/// A bounded ring of the newest `N` events.
///
/// The log has no clock of its own: whoever drives the manager tells it
/// the time ([`EventLog::set_time`]) before each call that may record
/// something, and every event recorded meanwhile carries that time.
#[derive(Clone, Debug)]
pub struct EventLog<const N: usize = EVENT_LOG_CAPACITY> {
    entries: Deque<Logged, N>,
    next: u32,
    now_ns: u64,
}

impl<const N: usize> Default for EventLog<N> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const N: usize> EventLog<N> {
    /// An empty log; the first event gets sequence number 0.
    pub const fn new() -> Self {
        EventLog {
            entries: Deque::new(),
            next: 0,
            now_ns: 0,
        }
    }

    /// Sets the time events recorded from now on carry, in nanoseconds of
    /// the manager's timer. It never goes back: an earlier time is ignored.
    pub fn set_time(&mut self, now_ns: u64) {
        self.now_ns = self.now_ns.max(now_ns);
    }

    /// The time last set ([`EventLog::set_time`]), in nanoseconds of the
    /// manager's timer.
    pub fn now_ns(&self) -> u64 {
        self.now_ns
    }

    /// Appends `event`, overwriting the oldest if the ring is full, and
    /// returns its sequence number.
    pub fn record(&mut self, event: Event) -> u32 {
        let sequence = self.next;
        if self.entries.is_full() {
            self.entries.pop_front();
        }
        // There is room: the oldest was just taken if there was none.
        let _ = self.entries.push_back(Logged {
            sequence,
            time_ns: self.now_ns,
            event,
        });
        self.next = sequence.wrapping_add(1);
        sequence
    }

    /// The sequence number the next event will get.
    pub fn next_sequence(&self) -> u32 {
        self.next
    }

    /// The sequence number of the oldest event held (the next one's if none is).
    pub fn oldest_sequence(&self) -> u32 {
        self.entries.front().map_or(self.next, |e| e.sequence)
    }

    /// How many events are held.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether no event is held.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The events held with sequence number `from` or later, oldest first,
    /// and how many from `from` on were overwritten. A `from` after the
    /// newest event gives nothing and nothing overwritten.
    pub fn since(&self, from: u32) -> Since<'_> {
        let oldest = self.oldest_sequence();
        let overwritten = if after(from, self.next) || after(from, oldest) {
            0
        } else {
            oldest.wrapping_sub(from)
        };
        Since {
            overwritten,
            next: self.next,
            entries: {
                let (older, newer) = self.entries.as_slices();
                older.iter().chain(newer.iter())
            },
            from,
        }
    }
}

impl FabricManager {
    /// Tells the event log the time, in nanoseconds of the manager's timer
    /// (`hw::Timer::now_ns`): events recorded from now on carry it. The
    /// firmware and the simulator call it before each call into the
    /// manager; [`FabricManager::start`] sets it from its own timer.
    pub fn set_time(&mut self, now_ns: u64) {
        self.events.set_time(now_ns);
    }

    /// Logs that the link of `port` of `switch` came up (`up`) or went down.
    pub fn record_link(&mut self, switch: SwitchIndex, port: PortIndex, up: bool) -> u32 {
        self.events.record(if up {
            Event::LinkUp { switch, port }
        } else {
            Event::LinkDown { switch, port }
        })
    }

    /// Logs `count` TLPs that `check` dropped at `port` of `switch` since
    /// the last time they were recorded: the increase of that port's drop
    /// counter ([`IsolationCheck::from_counter_entry`]) since it was last
    /// read. Nothing is logged for a count of 0.
    pub fn record_isolation_drops(
        &mut self,
        switch: SwitchIndex,
        port: PortIndex,
        check: IsolationCheck,
        count: u32,
    ) -> Option<u32> {
        (count > 0).then(|| {
            self.events.record(Event::IsolationDrops {
                switch,
                port,
                check,
                count,
            })
        })
    }

    /// Logs an error message (ERR_COR, ERR_NONFATAL or ERR_FATAL) with
    /// requester ID `requester` that the switch forwarded to the
    /// management CPU, with where that function is bound.
    pub fn record_error_message(&mut self, requester: Bdf, severity: ErrorSeverity) -> u32 {
        let binding = self.binding_of(requester);
        self.events.record(Event::ErrorMessage {
            requester,
            severity,
            binding,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn link(port: u8) -> Event {
        Event::LinkUp {
            switch: SwitchIndex::LOCAL,
            port: PortIndex(port),
        }
    }

    #[test]
    fn reading_from_a_sequence_number_says_what_was_overwritten() {
        let mut log = EventLog::<4>::new();
        for port in 0..6 {
            assert_eq!(log.record(link(port)), u32::from(port));
        }
        // 0 and 1 are gone; 2..=5 are held.
        let since = log.since(0);
        assert_eq!(since.overwritten, 2);
        assert_eq!(since.next, 6);
        let sequences: [u32; 4] = core::array::from_fn({
            let mut it = log.since(0);
            move |_| it.next().expect("four held").sequence
        });
        assert_eq!(sequences, [2, 3, 4, 5]);
        let mut since = log.since(4);
        assert_eq!(since.overwritten, 0);
        assert_eq!(since.next().map(|e| e.event), Some(link(4)));
        assert_eq!(since.next().map(|e| e.sequence), Some(5));
        assert!(since.next().is_none());
        let mut since = log.since(6);
        assert_eq!(since.overwritten, 0);
        assert!(since.next().is_none());
    }

    #[test]
    fn sequence_numbers_wrap() {
        let mut log = EventLog::<2> {
            entries: Deque::new(),
            next: u32::MAX,
            now_ns: 0,
        };
        log.record(link(0));
        log.record(link(1));
        log.record(link(2));
        let mut since = log.since(u32::MAX);
        assert_eq!(since.overwritten, 1);
        assert_eq!(since.next().map(|e| e.sequence), Some(0));
        assert_eq!(since.next().map(|e| e.sequence), Some(1));
        assert!(since.next().is_none());
    }

    #[test]
    fn an_event_carries_the_time_the_log_was_last_told() {
        let mut log = EventLog::<4>::new();
        log.record(link(0));
        log.set_time(5_000);
        log.record(link(1));
        log.record(link(2));
        log.set_time(3_000);
        log.record(link(3));
        let times: [u64; 4] = core::array::from_fn({
            let mut it = log.since(0);
            move |_| it.next().expect("four held").time_ns
        });
        // Before any time was set: 0; an earlier time does not go back.
        assert_eq!(times, [0, 5_000, 5_000, 5_000]);
    }

    #[test]
    fn isolation_checks_come_from_their_counter_entries() {
        let drops = (0..counter::NAMES.len() as u32)
            .filter_map(IsolationCheck::from_counter_entry)
            .count();
        assert_eq!(drops, 5);
        assert_eq!(
            IsolationCheck::from_counter_entry(counter::FIRST_DROP),
            None
        );
        assert_eq!(
            ErrorSeverity::from_message_code(0x33),
            Some(ErrorSeverity::Fatal)
        );
    }
}
