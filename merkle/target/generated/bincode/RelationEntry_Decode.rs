impl < __Context > :: bincode :: Decode < __Context > for RelationEntry
{
    fn decode < __D : :: bincode :: de :: Decoder < Context = __Context > >
    (decoder : & mut __D) ->core :: result :: Result < Self, :: bincode ::
    error :: DecodeError >
    {
        core :: result :: Result ::
        Ok(Self
        {
            name : :: bincode :: Decode :: decode(decoder) ?, kind : ::
            bincode :: Decode :: decode(decoder) ?, root : :: bincode ::
            Decode :: decode(decoder) ?, count : :: bincode :: Decode ::
            decode(decoder) ?, aux : :: bincode :: Decode :: decode(decoder)
            ?,
        })
    }
} impl < '__de, __Context > :: bincode :: BorrowDecode < '__de, __Context >
for RelationEntry
{
    fn borrow_decode < __D : :: bincode :: de :: BorrowDecoder < '__de,
    Context = __Context > > (decoder : & mut __D) ->core :: result :: Result <
    Self, :: bincode :: error :: DecodeError >
    {
        core :: result :: Result ::
        Ok(Self
        {
            name : :: bincode :: BorrowDecode ::< '_, __Context >::
            borrow_decode(decoder) ?, kind : :: bincode :: BorrowDecode ::<
            '_, __Context >:: borrow_decode(decoder) ?, root : :: bincode ::
            BorrowDecode ::< '_, __Context >:: borrow_decode(decoder) ?, count
            : :: bincode :: BorrowDecode ::< '_, __Context >::
            borrow_decode(decoder) ?, aux : :: bincode :: BorrowDecode ::< '_,
            __Context >:: borrow_decode(decoder) ?,
        })
    }
}