//! What a stage reads from the environment the supervisor gives it (`cuzk run`'s
//! `stage_env`): `CUZK_TRUST_PARAMS` is set to "true" or "false", and both are honoured.
//! (Its own process: the test sets environment variables.)

use clap::Parser;
use cuzk_stage_common::StageArgs;

#[derive(Parser)]
struct Stage {
    #[command(flatten)]
    stage: StageArgs,
}

#[test]
fn trust_params_from_the_environment_both_ways() {
    std::env::set_var("CUZK_ARENA", "/dev/shm/cuzk-arena");
    std::env::set_var("CUZK_IOX_PREFIX", "cuzk-t");
    for (value, want) in [("false", false), ("true", true)] {
        std::env::set_var("CUZK_TRUST_PARAMS", value);
        let args = Stage::try_parse_from(["cuzk-synthesis"]).unwrap();
        assert_eq!(args.stage.trust_params, want, "CUZK_TRUST_PARAMS={value}");
    }
}
