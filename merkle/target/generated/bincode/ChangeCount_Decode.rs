impl < __Context > :: bincode :: Decode < __Context > for ChangeCount
{
    fn decode < __D : :: bincode :: de :: Decoder < Context = __Context > >
    (decoder : & mut __D) ->core :: result :: Result < Self, :: bincode ::
    error :: DecodeError >
    {
        core :: result :: Result ::
        Ok(Self
        {
            relation : :: bincode :: Decode :: decode(decoder) ?, inserted :
            :: bincode :: Decode :: decode(decoder) ?, deleted : :: bincode ::
            Decode :: decode(decoder) ?,
        })
    }
} impl < '__de, __Context > :: bincode :: BorrowDecode < '__de, __Context >
for ChangeCount
{
    fn borrow_decode < __D : :: bincode :: de :: BorrowDecoder < '__de,
    Context = __Context > > (decoder : & mut __D) ->core :: result :: Result <
    Self, :: bincode :: error :: DecodeError >
    {
        core :: result :: Result ::
        Ok(Self
        {
            relation : :: bincode :: BorrowDecode ::< '_, __Context >::
            borrow_decode(decoder) ?, inserted : :: bincode :: BorrowDecode
            ::< '_, __Context >:: borrow_decode(decoder) ?, deleted : ::
            bincode :: BorrowDecode ::< '_, __Context >::
            borrow_decode(decoder) ?,
        })
    }
}