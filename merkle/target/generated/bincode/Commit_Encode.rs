impl :: bincode :: Encode for Commit
{
    fn encode < __E : :: bincode :: enc :: Encoder >
    (& self, encoder : & mut __E) ->core :: result :: Result < (), :: bincode
    :: error :: EncodeError >
    {
        :: bincode :: Encode :: encode(&self.parents, encoder) ?; :: bincode
        :: Encode :: encode(&self.state, encoder) ?; :: bincode :: Encode ::
        encode(&self.message, encoder) ?; :: bincode :: Encode ::
        encode(&self.time, encoder) ?; :: bincode :: Encode ::
        encode(&self.changes, encoder) ?; :: bincode :: Encode ::
        encode(&self.stats, encoder) ?; core :: result :: Result :: Ok(())
    }
}