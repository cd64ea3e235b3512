//! Unit tests of the polling interval: the server's hint clamped, the backoff doubling.

use std::time::Duration;

use super::TaskConfig;

#[test]
fn hint_is_clamped_and_backoff_doubles_to_the_ceiling() {
    let c = TaskConfig::new()
        .initial_poll_interval(Duration::from_millis(100))
        .min_poll_interval(Duration::from_millis(50))
        .max_poll_interval(Duration::from_millis(350));
    let mut b = c.initial_poll_interval;
    let seq: Vec<u128> = (0..4)
        .map(|_| c.next_interval(None, &mut b).as_millis())
        .collect();
    assert_eq!(seq, [100, 200, 350, 350]);
    assert_eq!(
        c.next_interval(Some(Duration::from_millis(1)), &mut b),
        Duration::from_millis(50)
    );
    assert_eq!(
        c.next_interval(Some(Duration::from_secs(3600)), &mut b),
        Duration::from_millis(350)
    );
    assert_eq!(
        c.next_interval(Some(Duration::from_millis(120)), &mut b),
        Duration::from_millis(120)
    );
}
