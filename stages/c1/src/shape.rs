//! Calling code generic over the Merkle tree shape of a sector size.
//!
//! filecoin-proofs types its circuits and vanilla proofs by tree shape (`SectorShape2KiB`,
//! ...) and dispatches with its `with_shape!` macro, which only fits functions with a single
//! generic parameter. A visitor trait carries any other state through the same dispatch.

use filecoin_proofs::constants::{
    SectorShape2KiB, SectorShape32GiB, SectorShape512MiB, SectorShape64GiB, SectorShape8MiB,
    SECTOR_SIZE_2_KIB, SECTOR_SIZE_32_GIB, SECTOR_SIZE_512_MIB, SECTOR_SIZE_64_GIB,
    SECTOR_SIZE_8_MIB,
};
use filecoin_proofs::MerkleTreeTrait;

/// Code to run with the tree shape of a sector size as a type parameter.
pub trait ShapeVisitor {
    type Output;
    fn visit<Tree: 'static + MerkleTreeTrait>(self) -> Self::Output;
}

/// Runs `visitor` with the tree shape of `sector_size`; `None` when the size is not one of
/// the supported PoRep sector sizes.
pub fn with_tree_shape<V: ShapeVisitor>(sector_size: u64, visitor: V) -> Option<V::Output> {
    Some(match sector_size {
        SECTOR_SIZE_2_KIB => visitor.visit::<SectorShape2KiB>(),
        SECTOR_SIZE_8_MIB => visitor.visit::<SectorShape8MiB>(),
        SECTOR_SIZE_512_MIB => visitor.visit::<SectorShape512MiB>(),
        SECTOR_SIZE_32_GIB => visitor.visit::<SectorShape32GiB>(),
        SECTOR_SIZE_64_GIB => visitor.visit::<SectorShape64GiB>(),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proof_type::SUPPORTED_SECTOR_SIZES;

    struct TreeName;
    impl ShapeVisitor for TreeName {
        type Output = &'static str;
        fn visit<Tree: 'static + MerkleTreeTrait>(self) -> &'static str {
            std::any::type_name::<Tree>()
        }
    }

    #[test]
    fn each_size_gets_filecoin_proofs_shape_for_it() {
        // 2 KiB, 8 MiB and 512 MiB share one shape type (SectorShapeBase); 32 and 64 GiB
        // each have their own.
        let expected = [
            std::any::type_name::<SectorShape2KiB>(),
            std::any::type_name::<SectorShape8MiB>(),
            std::any::type_name::<SectorShape512MiB>(),
            std::any::type_name::<SectorShape32GiB>(),
            std::any::type_name::<SectorShape64GiB>(),
        ];
        for (size, expected) in SUPPORTED_SECTOR_SIZES.iter().zip(expected) {
            assert_eq!(with_tree_shape(*size, TreeName), Some(expected));
        }
        assert_ne!(expected[3], expected[4]);
        assert_ne!(expected[0], expected[3]);
        assert!(with_tree_shape(4096, TreeName).is_none());
    }
}
