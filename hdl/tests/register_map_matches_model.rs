//! The register map's drop counters are weft-model's drop reasons, in counter order.

use weft_model::DropReason;
use weft_regs::csr::counter;

/// `NoWindow` as `NO_WINDOW`.
fn screaming_snake(name: &str) -> String {
    let mut out = String::new();
    for (i, c) in name.chars().enumerate() {
        if c.is_uppercase() && i > 0 {
            out.push('_');
        }
        out.push(c.to_ascii_uppercase());
    }
    out
}

#[test]
fn drop_counters_follow_the_models_drop_reasons() {
    let drops = &counter::NAMES[counter::FIRST_DROP as usize..];
    assert_eq!(drops.len(), DropReason::ALL.len());
    for (entry, reason) in drops.iter().zip(DropReason::ALL) {
        assert_eq!(
            entry.name,
            format!("DROP_{}", screaming_snake(&format!("{reason:?}")))
        );
    }
}
