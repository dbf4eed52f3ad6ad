//! The prover id filecoin-proofs wants, from a miner actor id, derived as lotus does.
//!
//! Lotus passes `address.NewIDAddress(miner).Payload()` zero-padded to 32 bytes: the payload
//! of an ID address is the actor id as an unsigned LEB128 varint.

use filecoin_proofs::ProverId;

pub fn prover_id_from_miner_id(miner_id: u64) -> ProverId {
    let mut prover_id = [0u8; 32];
    let mut rest = miner_id;
    for byte in prover_id.iter_mut() {
        let low_bits = (rest & 0x7f) as u8;
        rest >>= 7;
        if rest == 0 {
            *byte = low_bits;
            break;
        }
        *byte = low_bits | 0x80;
    }
    prover_id
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn miner_ids_encode_as_unsigned_leb128() {
        assert_eq!(prover_id_from_miner_id(0)[..2], [0, 0]);
        assert_eq!(prover_id_from_miner_id(127)[..2], [0x7f, 0]);
        // 1000 = 0b111_1101000: low 7 bits 0x68 with the continuation bit, then 0x07.
        assert_eq!(prover_id_from_miner_id(1000)[..3], [0xe8, 0x07, 0]);
        let max = prover_id_from_miner_id(u64::MAX);
        assert_eq!(
            max[..10],
            [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01]
        );
        assert!(max[10..].iter().all(|b| *b == 0));
    }
}
