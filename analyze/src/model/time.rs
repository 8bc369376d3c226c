//! Time as every output writes it: ns since the epoch as a UTC date.

/// The date of a day count since 1970-01-01 (inverse of
/// the `--from` parser's `days_from_civil`).
fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

/// ns since the epoch as `2026-11-24T18:02:57.123456789Z`.
pub fn format_utc(ns: i64) -> String {
    let (secs, frac) = (ns.div_euclid(1_000_000_000), ns.rem_euclid(1_000_000_000));
    let (days, rest) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{frac:09}Z",
        rest / 3600,
        rest / 60 % 60,
        rest % 60
    )
}
