//! The one loop every worker that makes an experiment's configurations
//! runs: the host making them one after another ([`crate::measure`]), and
//! each GPU's worker of `experiment --devices` ([`crate::spread`]). A
//! worker takes the next configuration from a cursor it shares with the
//! others, makes it, and goes on until none is left, a stop is requested
//! or a worker failed; `measure::Ending::of` then says how the workers'
//! runs ended.

use std::sync::atomic::{AtomicUsize, Ordering};

/// How one worker's loop ended.
#[derive(Default)]
pub struct WorkerEnd {
    /// The error that ended it.
    pub error: Option<anyhow::Error>,
    /// The configuration it was making when a stop request came (its
    /// repetitions may be unfinished).
    pub cut: Option<usize>,
}

/// One worker's loop over `count` configurations: while `halted` says
/// nothing halts the work (a stop request, or a worker's failure), takes
/// the index of the next configuration from `next` (shared with the other
/// workers) and makes it with `make`, until every one is taken. The first
/// error ends the loop and is returned; a stop request seen after a
/// configuration (`stop_requested`) marks it as the one cut.
pub fn make_each(
    next: &AtomicUsize,
    count: usize,
    halted: impl Fn() -> bool,
    stop_requested: impl Fn() -> bool,
    mut make: impl FnMut(usize) -> anyhow::Result<()>,
) -> WorkerEnd {
    let mut end = WorkerEnd::default();
    while !halted() {
        let i = next.fetch_add(1, Ordering::SeqCst);
        if i >= count {
            break;
        }
        if let Err(e) = make(i) {
            end.error = Some(e);
            break;
        }
        if stop_requested() {
            end.cut = Some(i);
        }
    }
    end
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::{Cell, RefCell};

    #[test]
    fn workers_take_each_configuration_once_until_none_is_left() {
        let next = AtomicUsize::new(0);
        let made = RefCell::new(Vec::new());
        let make = |i| {
            made.borrow_mut().push(i);
            Ok(())
        };
        let first = make_each(&next, 5, || made.borrow().len() >= 2, || false, make);
        let second = make_each(&next, 5, || false, || false, make);
        assert_eq!(
            *made.borrow(),
            [0, 1, 2, 3, 4],
            "the second worker went on from the first's cursor"
        );
        assert!(first.error.is_none() && first.cut.is_none());
        assert!(second.error.is_none() && second.cut.is_none());
    }

    #[test]
    fn an_error_ends_the_loop_and_a_stop_marks_the_configuration_cut() {
        let next = AtomicUsize::new(0);
        let end = make_each(
            &next,
            5,
            || false,
            || false,
            |i| match i {
                2 => anyhow::bail!("configuration {i} failed"),
                _ => Ok(()),
            },
        );
        assert_eq!(
            end.error.map(|e| e.to_string()).as_deref(),
            Some("configuration 2 failed")
        );
        assert_eq!(next.load(Ordering::SeqCst), 3, "nothing taken after the error");

        let next = AtomicUsize::new(0);
        let stopped = Cell::new(false);
        let end = make_each(
            &next,
            5,
            || stopped.get(),
            || stopped.get(),
            |i| {
                stopped.set(i == 1);
                Ok(())
            },
        );
        assert_eq!(end.cut, Some(1), "the stop came during configuration 1");
        assert_eq!(next.load(Ordering::SeqCst), 2, "nothing taken after the stop");
    }
}
