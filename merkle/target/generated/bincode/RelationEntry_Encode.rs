impl :: bincode :: Encode for RelationEntry
{
    fn encode < __E : :: bincode :: enc :: Encoder >
    (& self, encoder : & mut __E) ->core :: result :: Result < (), :: bincode
    :: error :: EncodeError >
    {
        :: bincode :: Encode :: encode(&self.name, encoder) ?; :: bincode ::
        Encode :: encode(&self.kind, encoder) ?; :: bincode :: Encode ::
        encode(&self.root, encoder) ?; :: bincode :: Encode ::
        encode(&self.count, encoder) ?; :: bincode :: Encode ::
        encode(&self.aux, encoder) ?; core :: result :: Result :: Ok(())
    }
}