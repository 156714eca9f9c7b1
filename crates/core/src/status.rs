//! The status page's arithmetic: per-repository fix rates and medians, per-day series, the SVG
//! chart and pagination, over plain facts taken from the registry.
//!
//! Pure: no I/O, no clock (the day the chart ends on is passed in), no randomness. It must never
//! decide who may see what (the server filters the facts before they get here), and never emit
//! text from a record into the SVG: the chart carries only dates and counts.

use std::collections::BTreeMap;

use chrono::{DateTime, Duration, NaiveDate, Utc};
use serde::Serialize;

use crate::proposal::{DdsStatus, StoredProposal, parse_iso8601};

/// What the status page needs of one code_fix.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ProposalFacts {
    pub id: String,
    /// `owner/repo`.
    pub repo: String,
    pub status: DdsStatus,
    /// When the check the proposal answers failed (`error_context.failed_at`), if readable.
    pub failed_at: Option<DateTime<Utc>>,
    pub proposed_at: DateTime<Utc>,
    /// The accepted `/approve`.
    pub approved_at: Option<DateTime<Utc>>,
    /// The fix commit reached the branch.
    pub pushed_at: Option<DateTime<Utc>>,
    /// The final transition (executed, failed or rejected).
    pub decided_at: Option<DateTime<Utc>>,
}

impl ProposalFacts {
    /// The facts of a stored proposal: times from its record and its transitions.
    pub fn from_stored(p: &StoredProposal) -> ProposalFacts {
        let at = |to: DdsStatus| p.history.iter().find(|t| t.to == to).map(|t| t.at);
        ProposalFacts {
            id: p.dds.id.clone(),
            repo: p.dds.project.clone(),
            status: p.status,
            failed_at: parse_iso8601(&p.dds.error_context.failed_at),
            proposed_at: p.created_at,
            approved_at: at(DdsStatus::Approved),
            pushed_at: p.pushed_at,
            decided_at: p
                .history
                .iter()
                .rev()
                .find(|t| crate::proposal::is_final(t.to))
                .map(|t| t.at),
        }
    }

    /// Whether a person approved it at some point (it is approved now, or was before its
    /// verdict).
    pub fn was_approved(&self) -> bool {
        self.approved_at.is_some()
            || matches!(
                self.status,
                DdsStatus::Approved | DdsStatus::Executed | DdsStatus::Failed
            )
    }
}

/// One repository's figures.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RepoStats {
    pub repo: String,
    pub proposals: usize,
    pub approved: usize,
    pub executed: usize,
    /// `executed / approved`, `None` before any approval.
    pub fix_rate: Option<f64>,
    /// Median seconds from the failed check to the proposal.
    pub median_failure_to_proposal: Option<i64>,
    /// Median seconds from `/approve` to the pushed commit.
    pub median_approve_to_push: Option<i64>,
}

/// The median of `values` (the mean of the two middle ones for an even count, rounded down).
pub fn median(mut values: Vec<i64>) -> Option<i64> {
    if values.is_empty() {
        return None;
    }
    values.sort_unstable();
    let n = values.len();
    Some(if n % 2 == 1 {
        values[n / 2]
    } else {
        (values[n / 2 - 1] + values[n / 2]).div_euclid(2)
    })
}

/// Figures per repository, sorted by repository name. Negative intervals (clocks that
/// disagreed) are left out of the medians rather than pulling them down.
pub fn repo_stats(facts: &[ProposalFacts]) -> Vec<RepoStats> {
    let mut by_repo: BTreeMap<&str, Vec<&ProposalFacts>> = BTreeMap::new();
    for f in facts {
        by_repo.entry(f.repo.as_str()).or_default().push(f);
    }
    by_repo
        .into_iter()
        .map(|(repo, fs)| {
            let approved = fs.iter().filter(|f| f.was_approved()).count();
            let executed = fs
                .iter()
                .filter(|f| f.status == DdsStatus::Executed)
                .count();
            let secs = |a: Option<DateTime<Utc>>, b: Option<DateTime<Utc>>| match (a, b) {
                (Some(a), Some(b)) if b >= a => Some((b - a).num_seconds()),
                _ => None,
            };
            RepoStats {
                repo: repo.to_string(),
                proposals: fs.len(),
                approved,
                executed,
                fix_rate: (approved > 0).then(|| executed as f64 / approved as f64),
                median_failure_to_proposal: median(
                    fs.iter()
                        .filter_map(|f| secs(f.failed_at, Some(f.proposed_at)))
                        .collect(),
                ),
                median_approve_to_push: median(
                    fs.iter()
                        .filter_map(|f| secs(f.approved_at, f.pushed_at))
                        .collect(),
                ),
            }
        })
        .collect()
}

/// Counts of one UTC day.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct DayCount {
    pub day: NaiveDate,
    pub failures: u32,
    pub proposals: u32,
    pub executed: u32,
}

/// The `days` days ending with `last_day`, oldest first: failed checks (`failures`, one time
/// per failed check), proposals made, and fixes whose check then passed, each on its UTC day.
/// Events outside the window are not counted.
pub fn daily_series(
    failures: &[DateTime<Utc>],
    facts: &[ProposalFacts],
    last_day: NaiveDate,
    days: u32,
) -> Vec<DayCount> {
    let days = days.max(1);
    let first = last_day - Duration::days(i64::from(days) - 1);
    let mut out: Vec<DayCount> = (0..days)
        .map(|i| DayCount {
            day: first + Duration::days(i64::from(i)),
            failures: 0,
            proposals: 0,
            executed: 0,
        })
        .collect();
    let mut bump = |t: DateTime<Utc>, which: fn(&mut DayCount) -> &mut u32| {
        let d = t.date_naive();
        if d < first || d > last_day {
            return;
        }
        let i = usize::try_from((d - first).num_days()).unwrap_or(0);
        if let Some(c) = out.get_mut(i) {
            *which(c) += 1;
        }
    };
    for t in failures {
        bump(*t, |c| &mut c.failures);
    }
    for f in facts {
        bump(f.proposed_at, |c| &mut c.proposals);
        if f.status == DdsStatus::Executed
            && let Some(t) = f.decided_at
        {
            bump(t, |c| &mut c.executed);
        }
    }
    out
}

/// Chart geometry, in SVG user units.
const WIDTH: u32 = 640;
const HEIGHT: u32 = 180;
const LEFT: u32 = 32;
const BOTTOM: u32 = 24;
const TOP: u32 = 20;

/// The series' names and colours, in drawing order (colour-blind-safe Okabe–Ito hues).
pub const SERIES: [(&str, &str); 3] = [
    ("failures", "#d55e00"),
    ("proposals", "#0072b2"),
    ("executed fixes", "#009e73"),
];

/// A grouped bar chart of `series`: per day a failures, a proposals and an executed-fixes
/// bar, a y axis with its maximum, the first and last day under the x axis, and a `<title>` on
/// every bar for people who hover. Self-contained SVG, no script, no external reference.
pub fn svg_chart(series: &[DayCount]) -> String {
    use std::fmt::Write;
    let max = series
        .iter()
        .map(|d| d.failures.max(d.proposals).max(d.executed))
        .max()
        .unwrap_or(0)
        .max(1);
    let plot_w = WIDTH - LEFT - 8;
    let plot_h = HEIGHT - TOP - BOTTOM;
    let n = u32::try_from(series.len()).unwrap_or(u32::MAX).max(1);
    let slot = f64::from(plot_w) / f64::from(n);
    let bar = (slot * 0.8 / 3.0).max(1.0);
    let mut s = String::new();
    let _ = write!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" id="chart" role="img" viewBox="0 0 {WIDTH} {HEIGHT}" width="{WIDTH}" height="{HEIGHT}" aria-labelledby="chart-title"><title id="chart-title">Failures, proposals and executed fixes per day</title>"#
    );
    let base = TOP + plot_h;
    let _ = write!(
        s,
        r##"<line x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{base}" stroke="#888"/><line x1="{LEFT}" y1="{base}" x2="{x2}" y2="{base}" stroke="#888"/><text x="{tx}" y="{ty}" font-size="10" text-anchor="end">{max}</text><text x="{tx}" y="{base}" font-size="10" text-anchor="end">0</text>"##,
        x2 = WIDTH - 8,
        tx = LEFT - 4,
        ty = TOP + 8,
    );
    for (i, d) in series.iter().enumerate() {
        let x0 = f64::from(LEFT) + slot * i as f64 + slot * 0.1;
        for (k, (v, (name, colour))) in [d.failures, d.proposals, d.executed]
            .into_iter()
            .zip(SERIES)
            .enumerate()
        {
            let h = f64::from(plot_h) * f64::from(v) / f64::from(max);
            let _ = write!(
                s,
                r#"<rect class="bar-{cls}" x="{x:.1}" y="{y:.1}" width="{bar:.1}" height="{h:.1}" fill="{colour}"><title>{day}: {v} {name}</title></rect>"#,
                cls = k,
                x = x0 + bar * k as f64,
                y = f64::from(base) - h,
                day = d.day,
            );
        }
    }
    if let (Some(first), Some(last)) = (series.first(), series.last()) {
        let _ = write!(
            s,
            r#"<text x="{LEFT}" y="{y}" font-size="10">{}</text><text x="{x}" y="{y}" font-size="10" text-anchor="end">{}</text>"#,
            first.day,
            last.day,
            y = HEIGHT - 8,
            x = WIDTH - 8,
        );
    }
    for (k, (name, colour)) in SERIES.iter().enumerate() {
        let x = LEFT + 8 + 130 * u32::try_from(k).unwrap_or(0);
        let _ = write!(
            s,
            r#"<rect x="{x}" y="4" width="10" height="10" fill="{colour}"/><text x="{tx}" y="13" font-size="11">{name}</text>"#,
            tx = x + 14,
        );
    }
    s.push_str("</svg>");
    s
}

/// One page of a list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct PageInfo {
    /// 1-based, clamped to the pages there are.
    pub page: usize,
    pub pages: usize,
    pub per_page: usize,
    pub total: usize,
    pub prev: Option<usize>,
    pub next: Option<usize>,
}

/// The items of page `page` (1-based; out of range means the last page) of `per_page` each.
pub fn paginate<T>(items: &[T], page: usize, per_page: usize) -> (&[T], PageInfo) {
    let per_page = per_page.max(1);
    let total = items.len();
    let pages = total.div_ceil(per_page).max(1);
    let page = page.clamp(1, pages);
    let start = (page - 1) * per_page;
    let end = (start + per_page).min(total);
    let info = PageInfo {
        page,
        pages,
        per_page,
        total,
        prev: (page > 1).then(|| page - 1),
        next: (page < pages).then(|| page + 1),
    };
    (&items[start.min(total)..end], info)
}

/// `2h 05m`, `3m 12s`, `45s`: a duration in seconds for people.
pub fn human_duration(secs: i64) -> String {
    let secs = secs.max(0);
    let (d, h, m, s) = (secs / 86_400, secs / 3600 % 24, secs / 60 % 60, secs % 60);
    if d > 0 {
        format!("{d}d {h:02}h")
    } else if h > 0 {
        format!("{h}h {m:02}m")
    } else if m > 0 {
        format!("{m}m {s:02}s")
    } else {
        format!("{s}s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn t(day: u32, h: u32, m: u32) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 3, day, h, m, 0).unwrap()
    }

    fn fact(repo: &str, status: DdsStatus) -> ProposalFacts {
        ProposalFacts {
            id: format!("DDS-FIX-20260301-{repo}"),
            repo: repo.into(),
            status,
            failed_at: Some(t(1, 10, 0)),
            proposed_at: t(1, 10, 2),
            approved_at: None,
            pushed_at: None,
            decided_at: None,
        }
    }

    #[test]
    fn medians_of_odd_even_and_empty_lists() {
        assert_eq!(median(vec![]), None);
        assert_eq!(median(vec![5]), Some(5));
        assert_eq!(median(vec![9, 1, 5]), Some(5));
        assert_eq!(median(vec![4, 1, 3, 2]), Some(2));
        assert_eq!(median(vec![10, 20]), Some(15));
    }

    #[test]
    fn fix_rate_is_executed_over_approved_per_repository() {
        let mut a1 = fact("o/a", DdsStatus::Executed);
        a1.approved_at = Some(t(1, 11, 0));
        a1.pushed_at = Some(t(1, 11, 1));
        a1.decided_at = Some(t(1, 11, 30));
        let mut a2 = fact("o/a", DdsStatus::Failed);
        a2.approved_at = Some(t(1, 12, 0));
        a2.pushed_at = Some(t(1, 12, 5));
        a2.proposed_at = t(1, 10, 10);
        let a3 = fact("o/a", DdsStatus::Proposed);
        let b1 = fact("o/b", DdsStatus::Rejected);
        let stats = repo_stats(&[b1, a1, a2, a3]);
        assert_eq!(stats.len(), 2);
        let a = &stats[0];
        assert_eq!(a.repo, "o/a");
        assert_eq!((a.proposals, a.approved, a.executed), (3, 2, 1));
        assert_eq!(a.fix_rate, Some(0.5));
        // 2 min, 10 min, 2 min from failure to proposal.
        assert_eq!(a.median_failure_to_proposal, Some(120));
        // 1 min and 5 min from approval to push: mean of the two.
        assert_eq!(a.median_approve_to_push, Some(180));
        let b = &stats[1];
        assert_eq!((b.approved, b.executed, b.fix_rate), (0, 0, None));
        assert_eq!(b.median_approve_to_push, None);
    }

    #[test]
    fn an_approved_proposal_without_a_recorded_time_still_counts_as_approved() {
        // Records from before approval times were kept: the status says it was approved.
        let stats = repo_stats(&[fact("o/a", DdsStatus::Executed)]);
        assert_eq!(stats[0].fix_rate, Some(1.0));
    }

    #[test]
    fn clock_skew_is_left_out_of_medians() {
        let mut f = fact("o/a", DdsStatus::Proposed);
        f.failed_at = Some(t(2, 0, 0));
        assert_eq!(repo_stats(&[f])[0].median_failure_to_proposal, None);
    }

    #[test]
    fn daily_series_counts_each_event_on_its_day_within_the_window() {
        let mut done = fact("o/a", DdsStatus::Executed);
        done.decided_at = Some(t(3, 9, 0));
        let mut old = fact("o/a", DdsStatus::Proposed);
        old.proposed_at = t(1, 0, 0) - Duration::days(30);
        let failures = [t(1, 9, 0), t(1, 23, 59), t(3, 0, 0), t(4, 0, 0)];
        let s = daily_series(&failures, &[done, old], t(3, 0, 0).date_naive(), 3);
        assert_eq!(s.len(), 3);
        assert_eq!(s[0].day, t(1, 0, 0).date_naive());
        assert_eq!((s[0].failures, s[0].proposals, s[0].executed), (2, 1, 0));
        assert_eq!((s[1].failures, s[1].proposals, s[1].executed), (0, 0, 0));
        assert_eq!((s[2].failures, s[2].proposals, s[2].executed), (1, 0, 1));
    }

    #[test]
    fn the_chart_scales_bars_to_the_largest_count_and_labels_the_days() {
        let s = [
            DayCount {
                day: t(1, 0, 0).date_naive(),
                failures: 4,
                proposals: 2,
                executed: 0,
            },
            DayCount {
                day: t(2, 0, 0).date_naive(),
                failures: 1,
                proposals: 1,
                executed: 1,
            },
        ];
        let svg = svg_chart(&s);
        assert!(svg.starts_with("<svg") && svg.ends_with("</svg>"));
        assert_eq!(svg.matches("<rect class=\"bar-").count(), 6);
        assert!(svg.contains("2026-03-01: 4 failures"));
        assert!(svg.contains("2026-03-02: 1 executed fixes"));
        // The largest bar fills the plot height; half of it is half as tall.
        let plot_h = f64::from(HEIGHT - TOP - BOTTOM);
        assert!(svg.contains(&format!("height=\"{plot_h:.1}\"")));
        assert!(svg.contains(&format!("height=\"{:.1}\"", plot_h / 2.0)));
        assert!(svg.contains(">4</text>"), "the y axis shows the maximum");
        assert!(!svg.contains("<script"));
    }

    #[test]
    fn an_empty_chart_still_draws_its_axes() {
        let svg = svg_chart(&[]);
        assert!(svg.contains("<line"));
        assert_eq!(svg.matches("<rect class=\"bar-").count(), 0);
    }

    #[test]
    fn pages_are_clamped_and_linked() {
        let items: Vec<u32> = (0..25).collect();
        let (p, info) = paginate(&items, 1, 10);
        assert_eq!(p, &items[..10]);
        assert_eq!((info.pages, info.prev, info.next), (3, None, Some(2)));
        let (p, info) = paginate(&items, 3, 10);
        assert_eq!(p, &items[20..]);
        assert_eq!((info.prev, info.next), (Some(2), None));
        let (p, info) = paginate(&items, 99, 10);
        assert_eq!((info.page, p.len()), (3, 5));
        let (p, info) = paginate::<u32>(&[], 0, 10);
        assert_eq!((p.len(), info.page, info.pages), (0, 1, 1));
    }

    #[test]
    fn durations_for_people() {
        assert_eq!(human_duration(45), "45s");
        assert_eq!(human_duration(192), "3m 12s");
        assert_eq!(human_duration(7500), "2h 05m");
        assert_eq!(human_duration(90_000), "1d 01h");
        assert_eq!(human_duration(-5), "0s");
    }
}
