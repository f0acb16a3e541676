J`êB¾B´*‰B.'FA¢B§Bh&f@˜®A«½UBê¡—A+CBe;ÁB£
BÓ½-@è¢AjÑA¸ÉJB:½Ÿ?üê
BÔ—*A¢U#B©(BªÅÂB@®-B,IB