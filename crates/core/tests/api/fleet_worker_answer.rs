//! A worker's answer on one pod is read up to its bound and no further: what answers through
//! the proxy is not trusted to stop.

use std::time::Duration;

use bytes::Bytes;
use futures::StreamExt;
use hyper::body::Frame;
use opc_core::fleet::{DecodeError, FeedError, WorkerAddress, WorkerAnswer, ask_worker};

use crate::fleet_client::{lines, worker};

/// The most one row's answer may take (`ROW_BYTES` in fleet/worker_answer.rs).
const ROW_BYTES: usize = 1 << 20;

#[tokio::test]
async fn an_answer_past_its_bound_is_refused_before_it_is_held() {
    let within = Duration::from_secs(10);
    let mut fits = b"null".to_vec();
    fits.resize(ROW_BYTES, b' ');
    let client = worker(vec![lines(vec![fits])]);
    let answer = ask_worker(&client, &WorkerAddress::default(), "u", within).await;
    assert_eq!(answer, WorkerAnswer::NotAbnormal);
    let endless =
        futures::stream::repeat_with(|| Ok(Frame::data(Bytes::from_static(&[b' '; 4096]))));
    let client = worker(vec![endless.boxed()]);
    assert_eq!(
        ask_worker(&client, &WorkerAddress::default(), "u", within).await,
        WorkerAnswer::Unanswered(FeedError::Protocol(DecodeError::LineTooLong {
            max: ROW_BYTES
        }))
    );
}
