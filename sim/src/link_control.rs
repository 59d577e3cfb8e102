//! The links carry out the hot resets and retrainings the fabric manager
//! asks of its switch's ports (weft-model's `Switch::take_link_requests`,
//! the port block's LINK register).
//!
//! - **Retrain** (Retrain Link, PCIe Base 6.0 §7.5.3.7): the link sends
//!   nothing for [`RECOVERY_TIME`] in both directions, then carries on;
//!   its Data Link Layer stays up through Recovery (§4.2.6.4), so flow
//!   control credits carry on (§3.4) and no TLP is lost.
//! - **Hot reset** (§4.2.6.11, §4.2.7): the link sends nothing for
//!   [`HOT_RESET_TIME`] and the device behind the port takes a
//!   Conventional Reset (`weft_devices::device::Device::reset`, §6.6.1) as the link
//!   comes back: its configuration space returns to its defaults and it
//!   answers Request Retry Status until it has booted. A TLP that reaches
//!   it meanwhile is handled by the reset device, as it would be by a
//!   device whose link is back. A hot reset of a host's or a fabric link
//!   only holds the link: the manager never asks for one.
//!
//! Requests are carried out when the manager's next configuration
//! request is sent and when the manager's call returns, at the manager's
//! clock: nothing else runs while it waits.

use std::cell::RefCell;
use std::time::Duration;

use weft_model::LinkRequest;

use crate::switch::WeftSwitch;
use crate::wiring::{Node, Place, Wiring};

/// How long a retrain holds the link: the model's Recovery, a few
/// microseconds on a link that locks at once (the spec bounds
/// Recovery.RcvrLock at 24 ms, §4.2.6.4.1).
pub const RECOVERY_TIME: Duration = Duration::from_micros(2);

/// How long a hot reset holds the link: the 2 ms the LTSSM stays in Hot
/// Reset (§4.2.6.11), then training from Detect, the model's 100 µs.
pub const HOT_RESET_TIME: Duration = Duration::from_micros(2_100);

/// Carries out every link request the switches' data planes took, at `now`.
pub(crate) fn carry_link_requests(
    switches: &[RefCell<WeftSwitch>],
    wiring: &mut Wiring,
    now: Duration,
) {
    for (index, switch) in switches.iter().enumerate() {
        let requests = switch.borrow_mut().model_mut().take_link_requests();
        for (port, request) in requests {
            let place = Place::new(index, port.0);
            let back = now
                + match request {
                    LinkRequest::Retrain => RECOVERY_TIME,
                    LinkRequest::HotReset => HOT_RESET_TIME,
                };
            wiring.hold_link(place, back);
            if let (LinkRequest::HotReset, Some(Node::Device(device))) =
                (request, wiring.nodes.get_mut(&place))
            {
                device.reset(back);
            }
        }
    }
}
