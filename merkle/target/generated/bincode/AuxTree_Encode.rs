impl :: bincode :: Encode for AuxTree
{
    fn encode < __E : :: bincode :: enc :: Encoder >
    (& self, encoder : & mut __E) ->core :: result :: Result < (), :: bincode
    :: error :: EncodeError >
    {
        :: bincode :: Encode :: encode(&self.label, encoder) ?; :: bincode ::
        Encode :: encode(&self.root, encoder) ?; core :: result :: Result ::
        Ok(())
    }
}