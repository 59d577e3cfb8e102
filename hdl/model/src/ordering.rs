//! The ordering checker: what entered a switch against what left it, judged by PCIe's ordering table.
//!
//! Given the sequence of TLPs that entered each ingress port (each with its
//! egress port, flow-control class, attributes and a unique id) and the
//! sequence of ids that left each egress port, [`check`] reports every TLP
//! lost, duplicated, misrouted or never sent, and every pair of TLPs of one
//! ingress→egress pair whose departure order breaks the Ordering Rules
//! Summary of PCIe Base 6.0 §2.4.1. It knows nothing of how a switch queues
//! or arbitrates; the RTL and the model are both held to it.
//!
//! The table, with the later TLP in the row and the earlier one in the
//! column ("may the row pass the column?"); only the "No" entries can be
//! broken:
//!
//! | later \ earlier | Posted | Non-posted | Completion |
//! |---|---|---|---|
//! | Posted | A2a No; A2b yes with RO, or with IDO and different Requester IDs | A3/A4 yes | A5 yes |
//! | Non-posted | B2a/C2a No; B2b/C2b yes with IDO and different Requester IDs | B3/B4 Y/N | B5 Y/N |
//! | Completion | D2a No; D2b yes for an I/O or Configuration Write Completion, with RO, or with IDO and Completer ID ≠ the Posted Request's Requester ID | D3/D4 yes | D5a Y/N; D5b No with the same Transaction ID |
//!
//! Relaxed Ordering never lets a non-posted request pass a posted one (B2a,
//! C2a): a read must push earlier writes ahead of it. The PASID variant of
//! the IDO rules is not modelled (TLP prefixes carry no PASID here).

use std::collections::{HashMap, HashSet};

use weft_pcie::id::Bdf;
use weft_pcie::tlp::{Attributes, Body, FlowControlClass, Header};

/// What the ordering table needs to know of one TLP.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TrackedTlp {
    /// Unique among every TLP given to one [`check`].
    pub id: u64,
    /// Posted, non-posted or completion.
    pub class: FlowControlClass,
    /// Attr\[2:0\]: Relaxed Ordering and ID-Based Ordering decide the "Y/N" entries.
    pub attributes: Attributes,
    /// Requester ID: of the request, or for a completion of the request it
    /// completes (with `tag`, the Transaction ID, §2.2.6.2).
    pub requester: Bdf,
    /// Tag of the request, or of the request a completion completes.
    pub tag: u16,
    /// Completer ID of a completion (D2b compares it under IDO); ignored for requests.
    pub completer: Bdf,
    /// The completion completes an I/O or Configuration Write (D2b): it may
    /// pass posted requests. The completion header does not say so, so the
    /// caller does.
    pub io_or_config_write_completion: bool,
}

impl TrackedTlp {
    /// The fields of `header`, under `id`; a completion is taken not to
    /// complete an I/O or Configuration Write (set the field to say otherwise).
    pub fn from_header(id: u64, header: &Header) -> Self {
        let completer = match &header.body {
            Body::Completion(completion) => completion.completer,
            _ => Bdf(0),
        };
        TrackedTlp {
            id,
            class: header.flow_control_class(),
            attributes: header.attributes(),
            requester: header.requester(),
            tag: header.tag().get(),
            completer,
            io_or_config_write_completion: false,
        }
    }
}

/// A TLP as it entered an ingress port, with the egress port it must leave by.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Routed {
    /// The egress port the switch was told to send it to.
    pub egress: usize,
    /// The TLP.
    pub tlp: TrackedTlp,
}

/// An entry of the ordering table that forbids one TLP passing another (§2.4.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Rule {
    /// A2a: a posted request passed a posted request without RO, or without
    /// IDO and a different Requester ID.
    PostedPassedPosted,
    /// B2a/C2a: a non-posted request passed a posted request without IDO
    /// and a different Requester ID.
    NonPostedPassedPosted,
    /// D2a: a completion passed a posted request, and D2b does not allow it.
    CompletionPassedPosted,
    /// D5b: a completion passed a completion with the same Transaction ID.
    CompletionPassedSameTransaction,
}

/// Something the switch did wrong, or a sequence the caller gave twice.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Violation {
    /// `later` entered `ingress` after `earlier`, both for `egress`, and left before it.
    Passed {
        /// The ingress port both entered.
        ingress: usize,
        /// The egress port both left.
        egress: usize,
        /// The id of the TLP that entered first.
        earlier: u64,
        /// The id of the TLP that entered second and left first.
        later: u64,
        /// The table entry broken.
        rule: Rule,
    },
    /// The TLP entered and never left.
    Lost {
        /// Its id.
        id: u64,
        /// Where it entered.
        ingress: usize,
        /// Where it should have left.
        egress: usize,
    },
    /// The TLP left its egress port more than once.
    Duplicated {
        /// Its id.
        id: u64,
        /// The egress port.
        egress: usize,
        /// How many times it left there.
        copies: usize,
    },
    /// The TLP left by a port other than the one it was routed to.
    Misrouted {
        /// Its id.
        id: u64,
        /// The egress port it was routed to.
        expected: usize,
        /// The egress port it left by.
        actual: usize,
    },
    /// A TLP left that never entered.
    Unknown {
        /// Its id.
        id: u64,
        /// The egress port it left by.
        egress: usize,
    },
    /// Two TLPs entered under one id: the sequences given are not checkable.
    ReusedId {
        /// The id.
        id: u64,
    },
}

/// Whether `later` may pass `earlier`, both from one ingress to one egress;
/// `Err` names the table entry that forbids it (§2.4.1).
pub fn may_pass(later: &TrackedTlp, earlier: &TrackedTlp) -> Result<(), Rule> {
    use FlowControlClass::{Completion, NonPosted, Posted};
    let ido_other_requester =
        later.attributes.id_based_ordering && later.requester != earlier.requester;
    match (later.class, earlier.class) {
        // A2b.
        (Posted, Posted) if later.attributes.relaxed_ordering || ido_other_requester => Ok(()),
        (Posted, Posted) => Err(Rule::PostedPassedPosted),
        // B2b, C2b: only IDO; RO does not apply.
        (NonPosted, Posted) if ido_other_requester => Ok(()),
        (NonPosted, Posted) => Err(Rule::NonPostedPassedPosted),
        // D2b: the completion's Completer ID against the request's Requester ID.
        (Completion, Posted)
            if later.io_or_config_write_completion
                || later.attributes.relaxed_ordering
                || (later.attributes.id_based_ordering && later.completer != earlier.requester) =>
        {
            Ok(())
        }
        (Completion, Posted) => Err(Rule::CompletionPassedPosted),
        // D5b.
        (Completion, Completion)
            if later.requester == earlier.requester && later.tag == earlier.tag =>
        {
            Err(Rule::CompletionPassedSameTransaction)
        }
        // A3, A4, A5, B3-B5, C3-C5, D3, D4, D5a: permitted.
        _ => Ok(()),
    }
}

/// Checks a switch run: `entered[i]` is what entered ingress `i`, in order;
/// `left[e]` the ids that left egress `e`, in order. Returns every
/// violation, sorted; an empty list means the run was legal.
pub fn check(entered: &[Vec<Routed>], left: &[Vec<u64>]) -> Vec<Violation> {
    let mut violations = Vec::new();

    // Where each id entered, and its place in that port's sequence.
    let mut origin: HashMap<u64, (usize, Routed)> = HashMap::new();
    for (ingress, sequence) in entered.iter().enumerate() {
        for routed in sequence {
            if origin.insert(routed.tlp.id, (ingress, *routed)).is_some() {
                violations.push(Violation::ReusedId { id: routed.tlp.id });
            }
        }
    }

    // Where each id left: egress and position there, first departure only.
    let mut departure: HashMap<u64, (usize, usize)> = HashMap::new();
    let departed: HashSet<u64> = left.iter().flatten().copied().collect();
    let mut copies: HashMap<(u64, usize), usize> = HashMap::new();
    for (egress, sequence) in left.iter().enumerate() {
        for (position, &id) in sequence.iter().enumerate() {
            *copies.entry((id, egress)).or_default() += 1;
            match origin.get(&id) {
                None => violations.push(Violation::Unknown { id, egress }),
                Some((_, routed)) if routed.egress != egress => {
                    violations.push(Violation::Misrouted {
                        id,
                        expected: routed.egress,
                        actual: egress,
                    })
                }
                Some(_) => {
                    departure.entry(id).or_insert((egress, position));
                }
            }
        }
    }
    for (&(id, egress), &count) in &copies {
        if count > 1 {
            violations.push(Violation::Duplicated {
                id,
                egress,
                copies: count,
            });
        }
    }

    for (ingress, sequence) in entered.iter().enumerate() {
        for routed in sequence {
            if !departed.contains(&routed.tlp.id) {
                violations.push(Violation::Lost {
                    id: routed.tlp.id,
                    ingress,
                    egress: routed.egress,
                });
            }
        }
        check_pairs(ingress, sequence, &departure, &mut violations);
    }
    violations.sort();
    violations
}

/// Every pair of TLPs of one ingress that left the same egress in the
/// reverse of their entry order, judged by [`may_pass`].
fn check_pairs(
    ingress: usize,
    sequence: &[Routed],
    departure: &HashMap<u64, (usize, usize)>,
    violations: &mut Vec<Violation>,
) {
    let departed: Vec<(usize, usize, &TrackedTlp)> = sequence
        .iter()
        .filter_map(|routed| {
            departure
                .get(&routed.tlp.id)
                .map(|&(egress, position)| (egress, position, &routed.tlp))
        })
        .collect();
    for (index, &(egress, earlier_position, earlier)) in departed.iter().enumerate() {
        for &(later_egress, later_position, later) in &departed[index + 1..] {
            // A reused id (reported already) is not a TLP passing itself.
            if later_egress != egress || later_position > earlier_position || later.id == earlier.id
            {
                continue;
            }
            if let Err(rule) = may_pass(later, earlier) {
                violations.push(Violation::Passed {
                    ingress,
                    egress,
                    earlier: earlier.id,
                    later: later.id,
                    rule,
                });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use FlowControlClass::{Completion, NonPosted, Posted};

    const HOST: Bdf = Bdf(0x0100);
    const GPU: Bdf = Bdf(0x0200);

    /// A TLP from `requester` with no attributes set.
    fn tlp(id: u64, class: FlowControlClass, requester: Bdf) -> TrackedTlp {
        TrackedTlp {
            id,
            class,
            attributes: Attributes::from_bits(0),
            requester,
            tag: id as u16,
            completer: GPU,
            io_or_config_write_completion: false,
        }
    }

    fn relaxed(mut tlp: TrackedTlp) -> TrackedTlp {
        tlp.attributes.relaxed_ordering = true;
        tlp
    }

    fn id_based(mut tlp: TrackedTlp) -> TrackedTlp {
        tlp.attributes.id_based_ordering = true;
        tlp
    }

    /// `earlier` then `later` enter ingress 0 for egress 0; they leave in the other order.
    fn swapped(earlier: TrackedTlp, later: TrackedTlp) -> Vec<Violation> {
        let entered = vec![vec![
            Routed {
                egress: 0,
                tlp: earlier,
            },
            Routed {
                egress: 0,
                tlp: later,
            },
        ]];
        check(&entered, &[vec![later.id, earlier.id]])
    }

    fn passed(rule: Rule) -> Vec<Violation> {
        vec![Violation::Passed {
            ingress: 0,
            egress: 0,
            earlier: 1,
            later: 2,
            rule,
        }]
    }

    #[test]
    fn posted_may_pass_non_posted_and_completions() {
        // A3, A4, A5: posted requests must be able to pass both (deadlock avoidance).
        assert_eq!(swapped(tlp(1, NonPosted, HOST), tlp(2, Posted, HOST)), []);
        assert_eq!(swapped(tlp(1, Completion, HOST), tlp(2, Posted, HOST)), []);
    }

    #[test]
    fn posted_passing_posted_needs_relaxed_ordering_or_ido_across_requesters() {
        assert_eq!(
            swapped(tlp(1, Posted, HOST), tlp(2, Posted, HOST)),
            passed(Rule::PostedPassedPosted)
        );
        assert_eq!(
            swapped(tlp(1, Posted, HOST), relaxed(tlp(2, Posted, HOST))),
            []
        );
        assert_eq!(
            swapped(tlp(1, Posted, GPU), id_based(tlp(2, Posted, HOST))),
            []
        );
        assert_eq!(
            swapped(tlp(1, Posted, HOST), id_based(tlp(2, Posted, HOST))),
            passed(Rule::PostedPassedPosted)
        );
        // The attribute of the passing TLP counts, not of the one passed.
        assert_eq!(
            swapped(relaxed(tlp(1, Posted, HOST)), tlp(2, Posted, HOST)),
            passed(Rule::PostedPassedPosted)
        );
    }

    #[test]
    fn non_posted_never_passes_posted_except_by_ido_across_requesters() {
        assert_eq!(
            swapped(tlp(1, Posted, HOST), tlp(2, NonPosted, HOST)),
            passed(Rule::NonPostedPassedPosted)
        );
        // B2a: Relaxed Ordering does not let a read pass a write.
        assert_eq!(
            swapped(tlp(1, Posted, HOST), relaxed(tlp(2, NonPosted, HOST))),
            passed(Rule::NonPostedPassedPosted)
        );
        assert_eq!(
            swapped(tlp(1, Posted, GPU), id_based(tlp(2, NonPosted, HOST))),
            []
        );
        assert_eq!(
            swapped(tlp(1, Posted, HOST), id_based(tlp(2, NonPosted, HOST))),
            passed(Rule::NonPostedPassedPosted)
        );
    }

    #[test]
    fn completion_passes_posted_only_as_d2b_allows() {
        assert_eq!(
            swapped(tlp(1, Posted, HOST), tlp(2, Completion, HOST)),
            passed(Rule::CompletionPassedPosted)
        );
        assert_eq!(
            swapped(tlp(1, Posted, HOST), relaxed(tlp(2, Completion, HOST))),
            []
        );
        let mut write_completion = tlp(2, Completion, HOST);
        write_completion.io_or_config_write_completion = true;
        assert_eq!(swapped(tlp(1, Posted, HOST), write_completion), []);
        // IDO compares the completion's Completer ID (GPU) with the write's Requester ID.
        assert_eq!(
            swapped(tlp(1, Posted, HOST), id_based(tlp(2, Completion, HOST))),
            []
        );
        assert_eq!(
            swapped(tlp(1, Posted, GPU), id_based(tlp(2, Completion, HOST))),
            passed(Rule::CompletionPassedPosted)
        );
    }

    #[test]
    fn completions_of_one_transaction_keep_order_others_may_not() {
        let mut first = tlp(1, Completion, HOST);
        let mut second = tlp(2, Completion, HOST);
        first.tag = 7;
        second.tag = 7;
        assert_eq!(
            swapped(first, second),
            passed(Rule::CompletionPassedSameTransaction)
        );
        second.tag = 8;
        assert_eq!(swapped(first, second), []);
        second.tag = 7;
        second.requester = GPU;
        assert_eq!(swapped(first, second), []);
    }

    #[test]
    fn requests_and_completions_may_pass_non_posted_and_each_other() {
        // B3, B4, C3, C4 (Y/N), D3, D4 (yes), B5, C5 (Y/N).
        assert_eq!(
            swapped(tlp(1, NonPosted, HOST), tlp(2, NonPosted, HOST)),
            []
        );
        assert_eq!(
            swapped(tlp(1, NonPosted, HOST), tlp(2, Completion, HOST)),
            []
        );
        assert_eq!(
            swapped(tlp(1, Completion, HOST), tlp(2, NonPosted, HOST)),
            []
        );
    }

    #[test]
    fn order_across_different_ports_is_free() {
        // Two ingresses, one egress: the writes of ingress 1 overtake ingress 0's.
        let entered = vec![
            vec![Routed {
                egress: 0,
                tlp: tlp(1, Posted, HOST),
            }],
            vec![Routed {
                egress: 0,
                tlp: tlp(2, NonPosted, HOST),
            }],
        ];
        assert_eq!(check(&entered, &[vec![2, 1]]), []);
        // One ingress, two egresses: the read leaves egress 1 before the write leaves egress 0.
        let entered = vec![vec![
            Routed {
                egress: 0,
                tlp: tlp(1, Posted, HOST),
            },
            Routed {
                egress: 1,
                tlp: tlp(2, NonPosted, HOST),
            },
        ]];
        assert_eq!(check(&entered, &[vec![1], vec![2]]), []);
    }

    #[test]
    fn every_pair_out_of_order_is_reported() {
        // Three writes leave reversed: 2 passed 1, 3 passed 1 and 2.
        let entered = vec![(1..=3)
            .map(|id| Routed {
                egress: 0,
                tlp: tlp(id, Posted, HOST),
            })
            .collect::<Vec<_>>()];
        let violations = check(&entered, &[vec![3, 2, 1]]);
        let pairs: Vec<(u64, u64)> = violations
            .iter()
            .map(|violation| match violation {
                Violation::Passed { earlier, later, .. } => (*earlier, *later),
                other => panic!("unexpected {other:?}"),
            })
            .collect();
        assert_eq!(pairs, [(1, 2), (1, 3), (2, 3)]);
    }

    #[test]
    fn lost_duplicated_misrouted_unknown_and_reused_are_reported() {
        let entered = vec![
            vec![
                Routed {
                    egress: 0,
                    tlp: tlp(1, Posted, HOST),
                },
                Routed {
                    egress: 1,
                    tlp: tlp(2, Posted, HOST),
                },
                Routed {
                    egress: 1,
                    tlp: tlp(3, Posted, HOST),
                },
            ],
            vec![
                Routed {
                    egress: 0,
                    tlp: tlp(4, Posted, HOST),
                },
                Routed {
                    egress: 0,
                    tlp: tlp(4, NonPosted, HOST),
                },
            ],
        ];
        // 1 leaves twice; 2 leaves by the wrong port; 3 is lost; 9 was never sent.
        let left = [vec![1, 1, 4, 2], vec![9]];
        assert_eq!(
            check(&entered, &left),
            vec![
                Violation::Lost {
                    id: 3,
                    ingress: 0,
                    egress: 1
                },
                Violation::Duplicated {
                    id: 1,
                    egress: 0,
                    copies: 2
                },
                Violation::Misrouted {
                    id: 2,
                    expected: 1,
                    actual: 0
                },
                Violation::Unknown { id: 9, egress: 1 },
                Violation::ReusedId { id: 4 },
            ]
        );
    }

    #[test]
    fn a_legal_interleaving_of_every_class_passes() {
        // Ingress 0 sends W1, R2, C3 (RO), W4 to egress 0; the egress sends
        // W1, W4 (posted passes the read), C3 (RO completion), R2.
        let entered = vec![vec![
            Routed {
                egress: 0,
                tlp: tlp(1, Posted, HOST),
            },
            Routed {
                egress: 0,
                tlp: tlp(2, NonPosted, HOST),
            },
            Routed {
                egress: 0,
                tlp: relaxed(tlp(3, Completion, HOST)),
            },
            Routed {
                egress: 0,
                tlp: tlp(4, Posted, HOST),
            },
        ]];
        assert_eq!(check(&entered, &[vec![1, 4, 3, 2]]), []);
        // The same, with the read ahead of W1: B2a.
        assert_eq!(
            check(&entered, &[vec![2, 1, 4, 3]]),
            vec![Violation::Passed {
                ingress: 0,
                egress: 0,
                earlier: 1,
                later: 2,
                rule: Rule::NonPostedPassedPosted
            }]
        );
    }

    #[test]
    fn from_header_reads_class_attributes_and_ids() {
        use weft_pcie::tlp::{Completion as Cpl, CompletionStatus, Tag, TrafficClass};
        let header = Header {
            digest_present: false,
            poisoned: false,
            body: Body::Completion(Cpl {
                locked: false,
                traffic_class: TrafficClass::TC0,
                attributes: Attributes::from_bits(0b010),
                completer: GPU,
                status: CompletionStatus::Successful,
                byte_count_modified: false,
                byte_count: 64,
                requester: HOST,
                tag: Tag::from_8bit(5),
                lower_address: 0,
                data_dw: Some(16),
            }),
        };
        let tracked = TrackedTlp::from_header(42, &header);
        assert_eq!(tracked.class, Completion);
        assert!(tracked.attributes.relaxed_ordering);
        assert_eq!(
            (tracked.requester, tracked.completer, tracked.tag),
            (HOST, GPU, 5)
        );
    }
}
