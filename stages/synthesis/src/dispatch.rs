//! Reaching the tree-shape-typed circuits from an untyped `C1Input`.

use cuzk_c1::{with_tree_shape, C1Input, ShapeVisitor};
use filecoin_proofs::MerkleTreeTrait;

use crate::circuits::PorepCircuits;
use crate::error::SynthesisError;

/// Work to do with the circuits of a C1, whatever its tree shape: typically a loop over the
/// partitions that builds, synthesizes and proves one at a time.
pub trait CircuitsVisitor {
    type Output;
    fn visit<Tree: 'static + MerkleTreeTrait>(
        self,
        circuits: PorepCircuits<'_, Tree>,
    ) -> Self::Output;
}

/// Sets up the C1's circuits for its sector size's tree shape and hands them to `visitor`.
pub fn with_porep_circuits<V: CircuitsVisitor>(
    c1: &C1Input,
    visitor: V,
) -> Result<V::Output, SynthesisError> {
    struct Shape<'c, V> {
        c1: &'c C1Input,
        visitor: V,
    }
    impl<V: CircuitsVisitor> ShapeVisitor for Shape<'_, V> {
        type Output = Result<V::Output, SynthesisError>;
        fn visit<Tree: 'static + MerkleTreeTrait>(self) -> Self::Output {
            Ok(self.visitor.visit(PorepCircuits::<Tree>::new(self.c1)?))
        }
    }
    with_tree_shape(c1.sector_size(), Shape { c1, visitor }).unwrap_or_else(|| {
        Err(SynthesisError::UnsupportedSectorSize {
            file: c1.file().to_path_buf(),
            sector_size: c1.sector_size(),
        })
    })
}
