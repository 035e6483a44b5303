//! `mapwright serve` settings: flags over `MAPWRIGHT_*` variables over the TOML file over the
//! defaults, checked through `--print-settings`.

use std::process::Command;

fn print_settings(args: &[&str], env: &[(&str, &str)]) -> (bool, String, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_mapwright"));
    cmd.args(["serve", "--print-settings"]).args(args);
    for (k, _) in std::env::vars().filter(|(k, _)| k.starts_with("MAPWRIGHT_")) {
        cmd.env_remove(k);
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn flags_over_variables_over_the_file_over_defaults() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("serve.toml");
    std::fs::write(
        &file,
        "workers = 2\nlease_seconds = 60\npoll_interval = \"250ms\"\nlisten = \"127.0.0.1:9000\"\nverify_interval = \"2h\"\n",
    )
    .unwrap();
    let config = file.to_str().unwrap();

    let (ok, out, err) = print_settings(&["--data-dir", "/tmp/x"], &[]);
    assert!(ok, "{err}");
    for line in [
        "listen = \"127.0.0.1:8080\"",
        "workers = 4",
        "lease_seconds = 300",
        "poll_interval = \"1s\"",
        "verify_interval = \"1d\"",
        "allow_private_networks = false",
        "shutdown_grace = \"10s\"",
    ] {
        assert!(out.contains(line), "default {line}: {out}");
    }

    let (ok, out, err) = print_settings(
        &["--config", config, "--workers", "7"],
        &[("MAPWRIGHT_WORKERS", "5"), ("MAPWRIGHT_LEASE_SECONDS", "30")],
    );
    assert!(ok, "{err}");
    for line in [
        "workers = 7",
        "lease_seconds = 30",
        "poll_interval = \"250ms\"",
        "listen = \"127.0.0.1:9000\"",
        "verify_interval = \"2h\"",
    ] {
        assert!(out.contains(line), "{line}: {out}");
    }

    let (ok, out, _) = print_settings(
        &[],
        &[("MAPWRIGHT_CONFIG", config), ("MAPWRIGHT_WORKERS", "5"), ("MAPWRIGHT_ALLOW_PRIVATE_NETWORKS", "true")],
    );
    assert!(ok);
    assert!(out.contains("workers = 5") && out.contains("lease_seconds = 60"), "{out}");
    assert!(out.contains("allow_private_networks = true"), "{out}");

    let (ok, out, _) =
        print_settings(&["--allow-private-networks=false"], &[("MAPWRIGHT_ALLOW_PRIVATE_NETWORKS", "true")]);
    assert!(ok && out.contains("allow_private_networks = false"), "{out}");

    std::fs::write(&file, "wokers = 2\n").unwrap();
    let (ok, _, err) = print_settings(&["--config", config], &[]);
    assert!(!ok && err.contains("serve.toml") && err.contains("wokers"), "{err}");
    let (ok, _, err) = print_settings(&["--poll-interval", "soon"], &[]);
    assert!(!ok && err.contains("poll-interval"), "{err}");
}
