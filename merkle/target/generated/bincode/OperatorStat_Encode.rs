impl :: bincode :: Encode for OperatorStat
{
    fn encode < __E : :: bincode :: enc :: Encoder >
    (& self, encoder : & mut __E) ->core :: result :: Result < (), :: bincode
    :: error :: EncodeError >
    {
        :: bincode :: Encode :: encode(&self.relation, encoder) ?; :: bincode
        :: Encode :: encode(&self.operator, encoder) ?; :: bincode :: Encode
        :: encode(&self.entries_read, encoder) ?; :: bincode :: Encode ::
        encode(&self.nodes_read, encoder) ?; :: bincode :: Encode ::
        encode(&self.nodes_written, encoder) ?; core :: result :: Result ::
        Ok(())
    }
}