//! Failing-URL check runs claimed by two processes at once (two stores on one database): one
//! run per site, a user's limit of runs at once and an owner's limit of periodic runs hold
//! whoever asks.

use std::sync::Arc;

use mapwright_store::{CheckRefusal, CheckRun, CheckTrigger, Store};
use tokio::task::JoinSet;

use crate::support::{T0, each_backend_pair, user, verified_site};

/// Claims of `sites` (in turn through `a` and `b`) with `trigger`, all at once.
async fn claim_all(
    a: &Arc<dyn Store>,
    b: &Arc<dyn Store>,
    sites: &[i64],
    trigger: &CheckTrigger,
) -> Vec<Result<CheckRun, CheckRefusal>> {
    let mut set = JoinSet::new();
    for (i, site) in sites.iter().enumerate() {
        let store = if i % 2 == 0 { a.clone() } else { b.clone() };
        let (trigger, site) = (trigger.clone(), *site);
        set.spawn(async move { store.claim_check_run(site, &format!("p{i}"), &trigger, T0, T0 + 60).await.unwrap() });
    }
    set.join_all().await
}

async fn sites_of(store: &dyn Store, email: &str, prefix: &str, n: usize) -> (mapwright_store::Actor, Vec<i64>) {
    let owner = user(store, email, false).await;
    let mut sites = Vec::new();
    for i in 0..n {
        sites.push(verified_site(store, owner, &format!("https://{prefix}{i}.example")).await);
    }
    (owner, sites)
}

#[tokio::test]
async fn concurrent_claims_give_one_run_per_site_and_keep_the_limits() {
    each_backend_pair(|a, b| async move {
        let (ann, sites) = sites_of(a.as_ref(), "ann@example.com", "s", 6).await;
        let periodic = CheckTrigger::Periodic { complete_before: T0, failed_before: T0, per_owner: 100 };
        // Twenty claims of one site, half through each store: exactly one run.
        let outcomes = claim_all(&a, &b, &[sites[0]; 20], &periodic).await;
        assert_eq!(outcomes.iter().filter(|o| o.is_ok()).count(), 1, "{outcomes:?}");
        assert!(outcomes.iter().all(|o| o.is_ok() || *o == Err(CheckRefusal::Running)), "{outcomes:?}");
        // "Check now" of the five other sites at once through both stores: two at once.
        let now = CheckTrigger::User { user_id: ann.user_id, per_user: 2, cooldown: 300 };
        let outcomes = claim_all(&a, &b, &sites[1..], &now).await;
        assert_eq!(outcomes.iter().filter(|o| o.is_ok()).count(), 2, "{outcomes:?}");
        assert!(outcomes.iter().all(|o| o.is_ok() || *o == Err(CheckRefusal::UserLimit(2))), "{outcomes:?}");
        // Periodic runs of one owner's four sites, one allowed at once.
        let (_, bobs) = sites_of(a.as_ref(), "bob@example.com", "b", 4).await;
        let one = CheckTrigger::Periodic { complete_before: T0, failed_before: T0, per_owner: 1 };
        let outcomes = claim_all(&a, &b, &bobs, &one).await;
        assert_eq!(outcomes.iter().filter(|o| o.is_ok()).count(), 1, "{outcomes:?}");
        assert!(outcomes.iter().all(|o| o.is_ok() || *o == Err(CheckRefusal::OwnerLimit(1))), "{outcomes:?}");
    })
    .await;
}
